-- Operation: pc_task_record_verdict   (SQLite twin: sql/sqlite/pc_task_record_verdict.sql; TypeScript: TaskStore.recordVerdict)
-- Purpose: the runner records the verdict it reached for a running attempt ('timeout' or
--   'interrupted_by_shutdown') before it stops the attempt's worker process, so that the verdict,
--   not the lease, decides how the attempt ends (ADR: timeout/cancel/shutdown; T8, T9):
--   pc_task_end_attempt and pc_task_expire_lost (the sweep of any runner, also after this runner
--   died) read it under the row lock; a 'timeout' verdict is never requeued, and pc_task_complete
--   refuses a success after it.
--   Fenced by the attempt token only, not by lease liveness: the runner holds the verdict, and an
--   expired lease cannot come back (pc_task_heartbeat requires a live one), so while the row still
--   runs under this token no other writer has ended it; a reconciler that ended it first changed
--   state or token and this call raises attempt_lost (that loss was recorded first and stands).
--   The first verdict wins ('kept'); a cancel recorded before it wins too ('cancel_first': the
--   verdict is not recorded and the attempt ends cancelled).
-- Transaction: owns its transaction.
-- Parameters: p_task_id BIGINT, p_attempt_token CHAR(36), p_verdict VARCHAR(32)
--   ('timeout' | 'interrupted_by_shutdown')
-- Result: one row (task_id, stop_verdict, outcome 'recorded' | 'kept' | 'cancel_first')
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost, invalid_argument.
CREATE PROCEDURE pc_task_record_verdict(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36),
  IN p_verdict       VARCHAR(32)
)
BEGIN
  DECLARE v_found   INT DEFAULT 1;
  DECLARE v_state   VARCHAR(16);
  DECLARE v_token   CHAR(36);
  DECLARE v_cancel  INT;
  DECLARE v_verdict VARCHAR(32);
  DECLARE v_outcome VARCHAR(16);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  IF p_verdict IS NULL OR p_verdict NOT IN ('timeout', 'interrupted_by_shutdown') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  START TRANSACTION;
  SELECT state, attempt_token, cancel_requested, stop_verdict INTO v_state, v_token, v_cancel, v_verdict
    FROM pc_durable_tasks WHERE task_id = p_task_id FOR UPDATE;
  IF v_found = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'task_not_found';
  END IF;
  IF v_state <> 'running' OR v_token IS NULL OR p_attempt_token IS NULL OR v_token <> p_attempt_token THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'attempt_lost';
  END IF;
  IF v_verdict IS NOT NULL THEN
    SET v_outcome = 'kept';
  ELSEIF v_cancel = 1 THEN
    SET v_outcome = 'cancel_first';
  ELSE
    UPDATE pc_durable_tasks SET stop_verdict = p_verdict, updated_at = UTC_TIMESTAMP(3) WHERE task_id = p_task_id;
    SET v_outcome = 'recorded';
  END IF;
  COMMIT;
  SELECT task_id, stop_verdict, v_outcome AS outcome FROM pc_durable_tasks WHERE task_id = p_task_id;
END
