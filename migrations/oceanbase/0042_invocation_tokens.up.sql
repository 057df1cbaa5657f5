-- Migration 0042 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): an acknowledgement bound to
-- its invocation (issue 40).
--
-- A processor's account may call the procedures its commit needs, with any arguments. Knowing
-- its term (it is in its context), it could call pc_aps_ack_invocation for another scope and
-- mark that scope's accepted request handled without running it. It now calls
-- pc_aps_ack_invocation_token instead, which checks a token the host derives per invocation from
-- a secret no processor account can read; pc_aps_ack_invocation stays for the runtime's own use
-- and is no longer granted to the processor account (ops/mysql-grants.sql; the derived accounts
-- lose it at the next start).
-- pc_aps_invocation_secret   one row (id 1): the secret, recorded once by the first host
--   (pc_aps_init_invocation_secret, 64 hexadecimal characters from the host's random source).
-- pc_aps_init_invocation_secret (new), pc_aps_ack_invocation_token (new).
CREATE TABLE pc_aps_invocation_secret (
  id         TINYINT     NOT NULL,
  secret     CHAR(64)    NOT NULL,
  created_at DATETIME(3) NOT NULL,
  PRIMARY KEY (id),
  CONSTRAINT ck_pc_aps_invocation_secret_id CHECK (id = 1)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- @procedure pc_aps_init_invocation_secret sha256=1eb193f3581afd23652bb5a62782b3c2fc26b9b278b047b8d0473a539c02be2c
-- @procedure pc_aps_ack_invocation_token sha256=1bbec344f7e9639a1da2781838c0466b0e7c5cd19bcd11be67df18db7019c96b
