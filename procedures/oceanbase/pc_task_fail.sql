-- Operation: pc_task_fail   (SQLite twin: sql/sqlite/pc_task_fail.sql; TypeScript: TaskStore.fail)
-- Purpose: terminal failure reported by the current attempt: state 'failed' with an error code
--   and message, owner, lease and dedupe key released. The task type's failure hook runs in the
--   same transaction (TypeScript, before this call) and converges the domain rows of the task.
-- Transaction: runs INSIDE the caller's transaction.
-- Parameters:
--   p_task_id BIGINT, p_attempt_token CHAR(36), p_error_code VARCHAR(64), p_error_message VARCHAR(2048)
-- Result: one row (task_id, state='failed', attempt_count, finished_at)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost.
CREATE PROCEDURE pc_task_fail(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36),
  IN p_error_code    VARCHAR(64),
  IN p_error_message VARCHAR(2048)
)
BEGIN
  DECLARE v_now DATETIME(3);
  CALL pc_task_assert_attempt(p_task_id, p_attempt_token);
  SET v_now = UTC_TIMESTAMP(3);
  UPDATE pc_durable_tasks
     SET state = 'failed', error_code = COALESCE(p_error_code, 'failed'), error_message = p_error_message,
         attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
   WHERE task_id = p_task_id;
  SELECT task_id, state, attempt_count, finished_at FROM pc_durable_tasks WHERE task_id = p_task_id;
END
