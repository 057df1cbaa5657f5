-- Operation: pc_task_probe_pending   (SQLite twin: sql/sqlite/pc_task_probe_pending.sql; TypeScript: TaskStore.hasPending)
-- Purpose: the wake-up probe of a task worker with free local capacity: whether a claim could
--   take something now, i.e. a task of a type the worker knows is pending and the running count
--   is below the database cap (ADR T6, pc_durable_task_control.capacity) and the maintenance
--   window is off (claims wait for its end). An index lookup on (state, task_id) and the running
--   count of the 'claims' row (kept by triggers since migration 0028); no lock, no write (a worker runs it every
--   POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_WAKEUP_POLL_MS while it has free capacity), so a
--   worker facing a full cap or only unknown types does not take the claims row lock for nothing.
-- Transaction: none (a plain read).
-- Parameters:
--   p_task_types  MEDIUMTEXT  comma-separated task types the worker's registry knows
-- Result: one row (pending 0/1)
-- Errors: none.
CREATE PROCEDURE pc_task_probe_pending(
  IN p_task_types MEDIUMTEXT
)
BEGIN
  SELECT (EXISTS (SELECT 1 FROM pc_durable_tasks FORCE INDEX (ix_pc_dt_state)
                   WHERE state = 'pending' AND FIND_IN_SET(task_type COLLATE utf8mb4_bin, p_task_types COLLATE utf8mb4_bin) > 0)
          AND EXISTS (SELECT 1 FROM pc_durable_task_control WHERE name = 'claims' AND running < capacity)
          AND NOT EXISTS (SELECT 1 FROM pc_artifact_processing_runtime WHERE runtime_id = 1 AND maintenance = 1)) AS pending;
END
