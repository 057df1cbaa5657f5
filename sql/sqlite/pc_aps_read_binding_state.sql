-- Operation: pc_aps_read_binding_state   (MySQL twin: procedures/oceanbase/pc_aps_read_binding_state.sql; TypeScript: Store.readBindingState)
-- Purpose: read the persisted check state of one binding and the database clock (recovery,
--   next cron fire from database time, status). Decides no write.
-- Transaction: none.
-- Parameters:
--   :binding_name
-- Result: one row (binding_name, last_schedule_checkpoint_at, scan_generation, scan_in_progress,
--   scan_upper_pending_sequence, scan_started_at, scan_finished_at, db_now); a binding without a
--   row reads as never checked.
-- Errors: none.
SELECT :binding_name AS binding_name,
       s.last_schedule_checkpoint_at,
       COALESCE(s.scan_generation, 0) AS scan_generation,
       COALESCE(s.scan_in_progress, 0) AS scan_in_progress,
       s.scan_upper_pending_sequence,
       s.scan_started_at,
       s.scan_finished_at,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM (SELECT 1 AS one) d
  LEFT JOIN pc_artifact_processing_binding_states s ON s.binding_name = :binding_name;
