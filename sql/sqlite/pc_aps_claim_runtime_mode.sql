-- Operation: pc_aps_claim_runtime_mode   (MySQL twin: procedures/oceanbase/pc_aps_claim_runtime_mode.sql; TypeScript: Store.claimRuntimeMode)
-- Purpose: a runtime start declares its mode: recorded when none is recorded yet (first start),
--   accepted when it equals the recorded one, refused when the database records the other mode
--   (only `apsup mode-switch` changes it) or while maintenance is on.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :mode   'global' or 'dedicated'
-- Result: one row (mode, maintenance, outcome 'recorded'|'matched', db_now)
-- Errors (message):
--   invalid_argument  mode is not global or dedicated.
--   maintenance       a mode switch is in progress.
--   mode_mismatch     the database records the other mode.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :mode IS NULL OR :mode NOT IN ('global', 'dedicated');
INSERT INTO pc_aps_signals (code)
SELECT 'maintenance'
  FROM pc_artifact_processing_runtime
 WHERE runtime_id = 1 AND maintenance = 1;
INSERT INTO pc_aps_signals (code)
SELECT 'mode_mismatch'
  FROM pc_artifact_processing_runtime
 WHERE runtime_id = 1 AND mode IS NOT NULL AND mode <> :mode;
UPDATE pc_artifact_processing_runtime
   SET mode = :mode, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE runtime_id = 1 AND mode IS NULL;
SELECT mode, maintenance,
       CASE WHEN changes() > 0 THEN 'recorded' ELSE 'matched' END AS outcome,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_artifact_processing_runtime
 WHERE runtime_id = 1;
COMMIT;
