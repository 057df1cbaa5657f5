-- Operation: pc_task_is_active   (SQLite twin: sql/sqlite/pc_task_is_active.sql; TypeScript: TaskStore.isActive, TaskContext.taskActive)
-- Purpose: whether a task is still active (pending or running), for a handler whose domain row names another task as its owner.
--   The one fact of pc_durable_tasks a handler may learn (issue 40: a handler's account has no
--   privilege on the table itself): no payload, result, error or attempt token.
-- Transaction: none (a plain read); inside the caller's transaction it reads that transaction's
--   view (READ COMMITTED: the latest committed state).
-- Parameters:
--   p_task_id BIGINT
-- Result: one row (active: 1 or 0; 0 for a task that does not exist).
-- Errors: none.
CREATE PROCEDURE pc_task_is_active(
  IN p_task_id BIGINT
)
BEGIN
  SELECT CASE WHEN EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = p_task_id AND state IN ('pending', 'running'))
              THEN 1 ELSE 0 END AS active;
END
