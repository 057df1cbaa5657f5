-- Migration 0016 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): one understanding across a
-- deployment (RFC 8, 9, 10).
--   * pc_aps_switch_mode (reinstalled, now one parameter): invalidates and checks every key of
--     the old mode the database holds, not only the keys of the families a module lists
--     (RFC 9 step 2: a family removed from the module kept a valid artifact:<family> term).
--   * pc_aps_read_mode_leases: every lease row of one mode, for the switch to name a live one.
--   * pc_aps_candidate_fingerprints and pc_aps_register_candidate / _refresh_candidate /
--     _withdraw_candidate: per supervisor key, the fingerprint of what each live candidate runs
--     with (binding -> family map and trigger capabilities; background roles also schedule,
--     budget and timeout); a start whose fingerprint differs from a live candidate's is refused
--     (RFC 8, 10). Rows expire unless refreshed (the lease TTL).
-- Irreversible by design (no down file): the previous pc_aps_switch_mode is not kept.
CREATE TABLE pc_aps_candidate_fingerprints (
  supervisor_key   VARCHAR(191) NOT NULL,
  candidate_id     VARCHAR(128) NOT NULL,
  role             VARCHAR(16)  NOT NULL,
  shared_sha256    CHAR(64)     NOT NULL,
  shared_text      MEDIUMTEXT   NOT NULL,
  execution_sha256 CHAR(64)     NULL,
  execution_text   MEDIUMTEXT   NULL,
  registered_at    DATETIME(3)  NOT NULL,
  expires_at       DATETIME(3)  NULL,
  PRIMARY KEY (supervisor_key, candidate_id),
  KEY ix_pc_aps_candidate_fingerprints_candidate (candidate_id),
  CONSTRAINT ck_pc_apcf_role CHECK (role IN ('all', 'api', 'background'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- @procedure pc_aps_switch_mode sha256=a2ad62d283f2b8f4b3ddc7a027de62616e5ce31d892e1a1c06d2b84a0144efd0
-- @procedure pc_aps_read_mode_leases sha256=61fae898b74bfceef99c73d4aa5d0ef9080f7d1573f1eeb6a2bd933fcab8f5aa
-- @procedure pc_aps_register_candidate sha256=ef7e861c2d4bfe42a547240617b9683db7954fc139072f426efeced1bb31c30c
-- @procedure pc_aps_refresh_candidate sha256=fac09e26d11673ed6485b5bffd53a07864bb2708bf6866bcf6b0a323ec27a421
-- @procedure pc_aps_withdraw_candidate sha256=95ee032de67dde071c4424c1d591ae2490ce18c74531f4aa5f1cbea0bfe4239e
