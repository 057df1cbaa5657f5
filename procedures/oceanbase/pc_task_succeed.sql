-- Operation: pc_task_succeed   (SQLite twin: sql/sqlite/pc_task_succeed.sql; TypeScript: TaskStore.succeed)
-- Purpose: pc_task_complete in its own transaction, for an attempt whose handler registered no
--   ctx.onComplete writes: the same rules (fenced by token and an unexpired lease by the
--   database clock, a recorded cancel or the runner's 'timeout' verdict refuses the success,
--   owner, lease and dedupe key released) in one call instead of START TRANSACTION, CALL, COMMIT.
-- Locks: the task row (FOR UPDATE, in pc_task_assert_attempt) until the commit.
-- Transaction: owns its transaction.
-- Parameters:
--   p_task_id BIGINT, p_attempt_token CHAR(36), p_result MEDIUMTEXT (JSON) NULL
-- Result: one row (task_id, state='succeeded', attempt_count, finished_at), after the commit.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost, cancel_requested
--   (nothing was written: the attempt then ends cancelled with its failure hook).
CREATE PROCEDURE pc_task_succeed(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36),
  IN p_result        MEDIUMTEXT
)
BEGIN
  DECLARE v_now      DATETIME(3);
  DECLARE v_cancel   INT;
  DECLARE v_verdict  VARCHAR(32);
  DECLARE v_attempts INT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  START TRANSACTION;
  CALL pc_task_assert_attempt(p_task_id, p_attempt_token);
  SELECT cancel_requested, stop_verdict, attempt_count INTO v_cancel, v_verdict, v_attempts
    FROM pc_durable_tasks WHERE task_id = p_task_id;
  IF v_verdict = 'timeout' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'attempt_lost';
  END IF;
  IF v_cancel = 1 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'cancel_requested';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);
  UPDATE pc_durable_tasks
     SET state = 'succeeded', result = p_result, attempt_owner = NULL, lease_expires_at = NULL,
         finished_at = v_now, updated_at = v_now
   WHERE task_id = p_task_id;
  COMMIT;
  SELECT p_task_id AS task_id, 'succeeded' AS state, v_attempts AS attempt_count, v_now AS finished_at;
END
