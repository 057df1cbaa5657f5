-- Migration 0008 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): the recorded supervisor mode
-- and the maintenance flag (RFC 9, mode switch; DESIGN.md section 3). One row (runtime_id = 1):
-- mode is NULL until the first runtime start records it (pc_aps_claim_runtime_mode);
-- pc_aps_switch_mode changes it. Also installs the status read pc_aps_read_family_backlog.
CREATE TABLE pc_artifact_processing_runtime (
  runtime_id  TINYINT     NOT NULL,
  mode        VARCHAR(16) NULL,
  maintenance TINYINT     NOT NULL DEFAULT 0,
  updated_at  DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (runtime_id),
  CONSTRAINT ck_pc_apr_single CHECK (runtime_id = 1),
  CONSTRAINT ck_pc_apr_mode CHECK (mode IS NULL OR mode IN ('global', 'dedicated')),
  CONSTRAINT ck_pc_apr_maintenance CHECK (maintenance IN (0, 1))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT INTO pc_artifact_processing_runtime (runtime_id, mode, maintenance, updated_at) VALUES (1, NULL, 0, UTC_TIMESTAMP(3));

-- @procedure pc_aps_read_runtime_mode
-- @procedure pc_aps_claim_runtime_mode
-- @procedure pc_aps_switch_mode
-- @procedure pc_aps_read_family_backlog
