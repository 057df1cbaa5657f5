-- Operation: pc_task_probe_pending   (MySQL twin: procedures/oceanbase/pc_task_probe_pending.sql; TypeScript: TaskStore.hasPending)
-- Purpose: the wake-up probe of a task worker with free capacity (after a foreign commit, and
--   in the sweep): whether any task is pending. One lookup on the (state, task_id) index.
-- Transaction: none.
-- Parameters: none.
-- Result: one row (pending 0/1)
-- Errors: none.
SELECT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE state = 'pending') AS pending;
