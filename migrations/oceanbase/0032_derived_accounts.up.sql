-- Migration 0032 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): the restricted session
-- accounts of a single-account deployment (issue 40, README "Database accounts").
--
-- Processors and task handlers reach the database through two kinds of session: their fenced
-- commit and their read handle. With the documented accounts (ops/mysql-grants.sql) the DBA names
-- them. With one privileged URL (the quick path), `apsup migrate up` / `apsup db accounts`
-- create two accounts of their own, with random passwords kept in this table:
--   processor  EXECUTE on the few procedures a commit needs, DML on the business tables only
--   reader     SELECT on the business tables only
-- Neither has any privilege on a pc_* table, so no statement of a processor can touch one,
-- whatever its text. Only the privileged URL reads this table; the accounts created from it
-- cannot.
--   role        'processor' | 'reader'
--   user_name   the account's user name (host '%')
--   password    the account's password (random, 32 bytes base64url)
CREATE TABLE pc_aps_derived_accounts (
  role       VARCHAR(16)  NOT NULL,
  user_name  VARCHAR(80)  NOT NULL,
  password   VARCHAR(128) NOT NULL,
  created_at DATETIME(3)  NOT NULL,
  PRIMARY KEY (role),
  CONSTRAINT ck_pc_aps_derived_accounts_role CHECK (role IN ('processor', 'reader'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
