-- Migration 0005 (SQLite): the recorded supervisor mode and the maintenance flag (RFC 9, mode
-- switch; DESIGN.md section 3). One row (runtime_id = 1): mode is NULL until the first runtime
-- start records it (pc_aps_claim_runtime_mode); pc_aps_switch_mode changes it. Also recreates
-- the signal trigger with the new error codes mode_mismatch, maintenance and live_candidate.
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

DROP TRIGGER pc_aps_signals_raise;
CREATE TRIGGER pc_aps_signals_raise BEFORE INSERT ON pc_aps_signals
BEGIN
  SELECT CASE NEW.code
    WHEN 'term_lost'           THEN RAISE(ABORT, 'term_lost')
    WHEN 'scan_stale'          THEN RAISE(ABORT, 'scan_stale')
    WHEN 'invalid_argument'    THEN RAISE(ABORT, 'invalid_argument')
    WHEN 'intent_not_found'    THEN RAISE(ABORT, 'intent_not_found')
    WHEN 'ack_beyond_request'  THEN RAISE(ABORT, 'ack_beyond_request')
    WHEN 'clean_beyond_dirty'  THEN RAISE(ABORT, 'clean_beyond_dirty')
    WHEN 'cron_fire_in_future' THEN RAISE(ABORT, 'cron_fire_in_future')
    WHEN 'attempt_lost'        THEN RAISE(ABORT, 'attempt_lost')
    WHEN 'task_not_found'      THEN RAISE(ABORT, 'task_not_found')
    WHEN 'task_active'         THEN RAISE(ABORT, 'task_active')
    WHEN 'mode_mismatch'       THEN RAISE(ABORT, 'mode_mismatch')
    WHEN 'maintenance'         THEN RAISE(ABORT, 'maintenance')
    WHEN 'live_candidate'      THEN RAISE(ABORT, 'live_candidate')
    ELSE RAISE(ABORT, 'unknown_signal')
  END;
END;
