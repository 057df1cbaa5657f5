-- Operation: pc_task_list_lost   (MySQL twin: procedures/oceanbase/pc_task_list_lost.sql; TypeScript: TaskStore.listLost)
-- Purpose: running tasks of the types the reconciling worker knows whose lease expired, oldest
--   lease first (reconciler input; each is re-checked by pc_task_expire_lost). A lost task of a
--   type the worker does not know is left to a worker that can run its failure hook.
-- Transaction: none.
-- Parameters: :page_limit (1 .. 1000, checked by the adapter), :task_types (comma-separated)
-- Result: rows (task_id, task_type, handler_version, attempt_token, lease_expires_at)
-- Errors: invalid_argument (adapter).
SELECT task_id, task_type, handler_version, attempt_token, lease_expires_at
  FROM pc_durable_tasks
 WHERE state = 'running' AND lease_expires_at <= strftime('%Y-%m-%d %H:%M:%f', 'now')
   AND instr(',' || :task_types || ',', ',' || task_type || ',') > 0
 ORDER BY lease_expires_at
 LIMIT :page_limit;
