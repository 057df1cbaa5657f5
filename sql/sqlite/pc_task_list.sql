-- Operation: pc_task_list   (MySQL twin: procedures/oceanbase/pc_task_list.sql; TypeScript: TaskStore.list)
-- Purpose: task summaries, newest first, keyset pagination by task_id.
-- Transaction: none.
-- Parameters: :before_task_id (NULL: newest), :page_limit (1 .. 1000, checked by the adapter), :state (NULL)
-- Result: rows (task_id, task_type, handler_version, state, dedupe_key, attempt_count,
--   progress_current, progress_total, progress_message, cancel_requested, created_at, finished_at)
-- Errors: invalid_argument (adapter).
SELECT task_id, task_type, handler_version, state, dedupe_key, attempt_count, progress_current,
       progress_total, progress_message, cancel_requested, created_at, finished_at
  FROM pc_durable_tasks
 WHERE (:before_task_id IS NULL OR task_id < :before_task_id)
   AND (:state IS NULL OR state = :state)
 ORDER BY task_id DESC
 LIMIT :page_limit;
