-- Operation: pc_aps_read_binding_state   (SQLite twin: sql/sqlite/pc_aps_read_binding_state.sql; TypeScript: Store.readBindingState)
-- Purpose: read the persisted check state of one binding (schedule checkpoint, scan generation,
--   scan-in-progress, scan upper bound) and the database clock, for recovery, for computing the
--   next cron fire from database time, and for status. A plain read: it decides no write.
-- Transaction: none needed.
-- Parameters:
--   p_binding_name VARCHAR(128)
-- Result: one row (binding_name, last_schedule_checkpoint_at, scan_generation, scan_in_progress,
--   scan_upper_pending_sequence, scan_started_at, scan_finished_at, db_now); a binding without a
--   row reads as never checked (checkpoint NULL, generation 0, not in progress).
-- Errors: none.
CREATE PROCEDURE pc_aps_read_binding_state(
  IN p_binding_name VARCHAR(128)
)
BEGIN
  SELECT p_binding_name AS binding_name,
         s.last_schedule_checkpoint_at,
         COALESCE(s.scan_generation, 0) AS scan_generation,
         COALESCE(s.scan_in_progress, 0) AS scan_in_progress,
         s.scan_upper_pending_sequence,
         s.scan_started_at,
         s.scan_finished_at,
         UTC_TIMESTAMP(3) AS db_now
    FROM (SELECT 1 AS one) d
    LEFT JOIN pc_artifact_processing_binding_states s ON s.binding_name = p_binding_name;
END
