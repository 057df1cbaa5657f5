-- Operation: pc_task_is_active   (MySQL twin: procedures/oceanbase/pc_task_is_active.sql; TypeScript: TaskStore.isActive, TaskContext.taskActive)
-- Purpose: whether a task is still active (pending or running), for a handler whose domain row
--   names another task as its owner; no payload, result, error or attempt token.
-- Transaction: none (a plain read); inside the caller's transaction it reads that transaction's view.
-- Parameters:
--   :task_id
-- Result: one row (active: 1 or 0; 0 for a task that does not exist).
-- Errors: none.
SELECT CASE WHEN EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id AND state IN ('pending', 'running'))
            THEN 1 ELSE 0 END AS active;
