-- Operation: pc_aps_finish_scan   (MySQL twin: procedures/oceanbase/pc_aps_finish_scan.sql; TypeScript: Store.finishScan)
-- Purpose: fenced end of a scan whose pages are all admitted: clears scan_in_progress without
--   waiting for workers, retries or business cursors. Idempotent for the same generation.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :supervisor_key, :holder_id, :supervisor_generation   the caller's term
--   :binding_name
--   :scan_generation
-- Result: one row (binding_name, outcome 'finished' | 'already_finished', scan_generation,
--   last_schedule_checkpoint_at, db_now)
-- Errors (message):
--   term_lost, scan_stale (the binding's scan generation is not :scan_generation).
BEGIN IMMEDIATE;
-- @include pc_aps_assert_term
INSERT INTO pc_aps_signals (code)
SELECT 'scan_stale'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_artifact_processing_binding_states
    WHERE binding_name = :binding_name AND scan_generation = :scan_generation);
UPDATE pc_artifact_processing_binding_states
   SET scan_in_progress = 0,
       scan_finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE binding_name = :binding_name AND scan_in_progress = 1;
SELECT binding_name,
       CASE WHEN changes() > 0 THEN 'finished' ELSE 'already_finished' END AS outcome,
       scan_generation,
       last_schedule_checkpoint_at,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_artifact_processing_binding_states
 WHERE binding_name = :binding_name;
COMMIT;
