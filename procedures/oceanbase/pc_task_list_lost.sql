-- Operation: pc_task_list_lost   (SQLite twin: sql/sqlite/pc_task_list_lost.sql; TypeScript: TaskStore.listLost)
-- Purpose: running tasks of the types the reconciling worker knows whose lease expired (database
--   clock), oldest lease first, for the reconciler. A plain read: each one is then ended by
--   pc_task_expire_lost, which re-checks. A lost task of a type this worker does not know (a
--   newer worker's, during a rolling deploy) is left to a worker that can run its failure hook.
-- Transaction: none.
-- Parameters:
--   p_page_limit  INT         1 .. 1000
--   p_task_types  MEDIUMTEXT  comma-separated task types the worker's registry knows (non-empty)
-- Result: up to p_page_limit rows (task_id, task_type, handler_version, attempt_token, lease_expires_at)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): invalid_argument.
CREATE PROCEDURE pc_task_list_lost(
  IN p_page_limit INT,
  IN p_task_types MEDIUMTEXT
)
BEGIN
  IF p_page_limit IS NULL OR p_page_limit < 1 OR p_page_limit > 1000 OR p_task_types IS NULL OR p_task_types = '' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SELECT task_id, task_type, handler_version, attempt_token, lease_expires_at
    FROM pc_durable_tasks
   WHERE state = 'running' AND lease_expires_at <= UTC_TIMESTAMP(3)
     AND FIND_IN_SET(task_type COLLATE utf8mb4_bin, p_task_types COLLATE utf8mb4_bin) > 0
   ORDER BY lease_expires_at
   LIMIT p_page_limit;
END
