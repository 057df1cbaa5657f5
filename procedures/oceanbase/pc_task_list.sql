-- Operation: pc_task_list   (SQLite twin: sql/sqlite/pc_task_list.sql; TypeScript: TaskStore.list)
-- Purpose: task summaries, newest first, with keyset pagination (correct beyond any page size:
--   pass the smallest task_id of the previous page).
-- Transaction: none.
-- Parameters:
--   p_before_task_id BIGINT NULL (NULL: from the newest), p_page_limit INT (1 .. 1000),
--   p_state VARCHAR(16) NULL (filter)
-- Result: up to p_page_limit rows (task_id, task_type, handler_version, state, dedupe_key,
--   attempt_count, progress_current, progress_total, progress_message, cancel_requested,
--   created_at, finished_at)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): invalid_argument.
CREATE PROCEDURE pc_task_list(
  IN p_before_task_id BIGINT,
  IN p_page_limit          INT,
  IN p_state          VARCHAR(16)
)
BEGIN
  IF p_page_limit IS NULL OR p_page_limit < 1 OR p_page_limit > 1000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SELECT task_id, task_type, handler_version, state, dedupe_key, attempt_count, progress_current,
         progress_total, progress_message, cancel_requested, created_at, finished_at
    FROM pc_durable_tasks
   WHERE (p_before_task_id IS NULL OR task_id < p_before_task_id)
     AND (p_state IS NULL OR state = p_state)
   ORDER BY task_id DESC
   LIMIT p_page_limit;
END
