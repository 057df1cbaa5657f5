-- Operation: pc_aps_task_complete_attempt   (internal, MySQL only: the one text of the success rules, called by pc_task_complete and pc_task_succeed_batch)
-- Purpose: terminal success of the current attempt: state 'succeeded', result stored, owner and
--   lease released, dedupe key released (active_dedupe_key becomes NULL). Fenced by token and an
--   unexpired lease in the same transaction; a late owner is rejected and leaves no trace.
--   A running task whose cancel was recorded never ends succeeded (ADR: a running task's cancel
--   ends after the handler's cleanup point, as cancelled; T7): if cancel_requested = 1 when this
--   success locks the row, it raises cancel_requested and writes nothing. A success that
--   committed before the cancel stands. After the runner's 'timeout' verdict
--   (pc_task_record_verdict) no success is recorded either (attempt_lost). The write carries
--   every one of these conditions in its own WHERE (one statement for a live attempt, the common
--   case); only when it wrote nothing do the checks run, in their order, to name the refusal
--   (COMPATIBILITY row 123). A raised error leaves nothing of the call behind.
-- Locks: the task row (the UPDATE's; on a refusal FOR UPDATE, in pc_task_assert_attempt) until
--   the caller commits.
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
  DECLARE v_cancel  INT;
  DECLARE v_verdict VARCHAR(32);
  -- The rules as the write's WHERE: the row lock, its latest version, the database clock. `<=>`
  -- lets a NULL verdict or flag through, as the checks below do.
  UPDATE pc_durable_tasks
     SET state = 'succeeded', result = p_result, attempt_owner = NULL, lease_expires_at = NULL,
         finished_at = UTC_TIMESTAMP(3), updated_at = UTC_TIMESTAMP(3)
   WHERE task_id = p_task_id AND state = 'running' AND attempt_token = p_attempt_token
     AND lease_expires_at > UTC_TIMESTAMP(3) AND NOT (stop_verdict <=> 'timeout') AND NOT (cancel_requested <=> 1);
  -- 'running' becomes 'succeeded': a matched row is a changed row (row 11).
  IF ROW_COUNT() = 0 THEN
    CALL pc_task_assert_attempt(p_task_id, p_attempt_token);
    SELECT cancel_requested, stop_verdict INTO v_cancel, v_verdict FROM pc_durable_tasks WHERE task_id = p_task_id;
    IF v_cancel = 1 AND NOT (v_verdict <=> 'timeout') THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'cancel_requested';
    END IF;
    -- The 'timeout' verdict, or a row that no check refuses now but the write found refused
    -- (it cannot become live again: a new attempt has a new token): no success.
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'attempt_lost';
  END IF;
END
