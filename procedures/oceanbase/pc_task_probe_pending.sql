-- Operation: pc_task_probe_pending   (SQLite twin: sql/sqlite/pc_task_probe_pending.sql; TypeScript: TaskStore.hasPending)
-- Purpose: the wake-up probe of a task worker with free capacity: whether any task is pending.
--   One lookup on the (state, task_id) index; no lock, no write (a worker runs it every
--   POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_WAKEUP_POLL_MS while it has free capacity).
-- Transaction: none (a plain read).
-- Parameters: none.
-- Result: one row (pending 0/1)
-- Errors: none.
CREATE PROCEDURE pc_task_probe_pending()
BEGIN
  SELECT EXISTS (SELECT 1 FROM pc_durable_tasks FORCE INDEX (ix_pc_dt_state) WHERE state = 'pending') AS pending;
END
