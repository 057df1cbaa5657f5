-- Operation: pc_task_complete   (SQLite twin: sql/sqlite/pc_task_complete.sql; TypeScript: TaskStore.complete)
-- Purpose: terminal success of the current attempt: state 'succeeded', result stored, owner and
--   lease released, dedupe key released (active_dedupe_key becomes NULL). Fenced by token and an
--   unexpired lease in the same transaction; a late owner is rejected and leaves no trace.
-- Transaction: runs INSIDE the caller's transaction (the handler's last domain writes commit with it).
-- Parameters:
--   p_task_id BIGINT, p_attempt_token CHAR(36), p_result MEDIUMTEXT (JSON) NULL
-- Result: one row (task_id, state='succeeded', attempt_count, finished_at)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost.
CREATE PROCEDURE pc_task_complete(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36),
  IN p_result        MEDIUMTEXT
)
BEGIN
  DECLARE v_now DATETIME(3);
  CALL pc_task_assert_attempt(p_task_id, p_attempt_token);
  SET v_now = UTC_TIMESTAMP(3);
  UPDATE pc_durable_tasks
     SET state = 'succeeded', result = p_result, attempt_owner = NULL, lease_expires_at = NULL,
         finished_at = v_now, updated_at = v_now
   WHERE task_id = p_task_id;
  SELECT task_id, state, attempt_count, finished_at FROM pc_durable_tasks WHERE task_id = p_task_id;
END
