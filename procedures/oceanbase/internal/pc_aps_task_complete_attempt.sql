-- Operation: pc_aps_task_complete_attempt   (internal, MySQL only: the one text of the success rules, called by pc_task_complete and pc_task_succeed_batch)
-- Purpose: terminal success of the current attempt: state 'succeeded', result stored, owner and
--   lease released, dedupe key released (active_dedupe_key becomes NULL). Fenced by token and an
--   unexpired lease in the same transaction; a late owner is rejected and leaves no trace.
--   A running task whose cancel was recorded never ends succeeded (ADR: a running task's cancel
--   ends after the handler's cleanup point, as cancelled; T7): if cancel_requested = 1 when this
--   success locks the row, it raises cancel_requested and writes nothing. A success that
--   committed before the cancel stands. After the runner's 'timeout' verdict
--   (pc_task_record_verdict) no success is recorded either (attempt_lost). Every check runs
--   before the one write, so a raised error leaves nothing of the call behind.
-- Locks: the task row (FOR UPDATE, in pc_task_assert_attempt) until the caller commits.
-- Transaction: runs INSIDE the caller's transaction (no START TRANSACTION, COMMIT or handler).
-- Parameters:
--   p_task_id BIGINT, p_attempt_token CHAR(36), p_result MEDIUMTEXT (JSON) NULL
-- Result: none (pc_task_complete selects the row; pc_task_succeed_batch reports an outcome).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost, cancel_requested.
CREATE PROCEDURE pc_aps_task_complete_attempt(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36),
  IN p_result        MEDIUMTEXT
)
BEGIN
  DECLARE v_now     DATETIME(3);
  DECLARE v_cancel  INT;
  DECLARE v_verdict VARCHAR(32);
  CALL pc_task_assert_attempt(p_task_id, p_attempt_token);
  SELECT cancel_requested, stop_verdict INTO v_cancel, v_verdict FROM pc_durable_tasks WHERE task_id = p_task_id;
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
END
