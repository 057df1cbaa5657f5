-- Migration 0005 (SQLite): the recorded supervisor mode and the maintenance flag (RFC 9, mode
-- switch; DESIGN.md section 3). One row (runtime_id = 1): mode is NULL until the first runtime
-- start records it (pc_aps_claim_runtime_mode); pc_aps_switch_mode changes it.
CREATE TABLE pc_artifact_processing_runtime (
  runtime_id  INTEGER NOT NULL PRIMARY KEY,
  mode        TEXT    NULL,
  maintenance INTEGER NOT NULL DEFAULT 0,
  updated_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  CONSTRAINT ck_pc_apr_single CHECK (runtime_id = 1),
  CONSTRAINT ck_pc_apr_mode CHECK (mode IS NULL OR mode IN ('global', 'dedicated')),
  CONSTRAINT ck_pc_apr_maintenance CHECK (maintenance IN (0, 1))
);
INSERT INTO pc_artifact_processing_runtime (runtime_id, mode, maintenance) VALUES (1, NULL, 0);
