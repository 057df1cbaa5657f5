-- Operation: pc_task_finish_cancelled   (SQLite twin: sql/sqlite/pc_task_finish_cancelled.sql; TypeScript: TaskStore.finishCancelled)
-- Purpose: a running attempt that saw the cancel intent at a control point and cleaned up ends
--   the task as 'cancelled' (owner, lease and dedupe key released).
-- Transaction: runs INSIDE the caller's transaction (the handler's cleanup writes commit with it).
-- Parameters:
--   p_task_id BIGINT, p_attempt_token CHAR(36)
-- Result: one row (task_id, state='cancelled', attempt_count, finished_at)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost,
--   invalid_argument (no cancel was requested).
CREATE PROCEDURE pc_task_finish_cancelled(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36)
)
BEGIN
  DECLARE v_now DATETIME(3);
  DECLARE v_cancel INT DEFAULT 0;
  CALL pc_task_assert_attempt(p_task_id, p_attempt_token);
  SELECT cancel_requested INTO v_cancel FROM pc_durable_tasks WHERE task_id = p_task_id;
  IF v_cancel <> 1 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);
  UPDATE pc_durable_tasks
     SET state = 'cancelled', error_code = 'cancelled', attempt_owner = NULL, lease_expires_at = NULL,
         finished_at = v_now, updated_at = v_now
   WHERE task_id = p_task_id;
  SELECT task_id, state, attempt_count, finished_at FROM pc_durable_tasks WHERE task_id = p_task_id;
END
