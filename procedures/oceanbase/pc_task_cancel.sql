-- Operation: pc_task_cancel   (SQLite twin: sql/sqlite/pc_task_cancel.sql; TypeScript: TaskStore.cancel)
-- Purpose: user cancel. A pending task is cancelled at once (dedupe key released); a running one
--   records the intent (cancel_requested = 1) and ends after the handler's cleanup point; a
--   terminal task is left as it is.
-- Transaction: owns its transaction.
-- Parameters:
--   p_task_id BIGINT
-- Result: one row (task_id, state, cancel_requested, outcome 'cancelled' | 'cancel_requested' | 'already_terminal')
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found.
CREATE PROCEDURE pc_task_cancel(
  IN p_task_id BIGINT
)
BEGIN
  DECLARE v_found   INT DEFAULT 1;
  DECLARE v_state   VARCHAR(16);
  DECLARE v_outcome VARCHAR(24);
  DECLARE v_now     DATETIME(3);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  START TRANSACTION;
  SELECT state INTO v_state FROM pc_durable_tasks WHERE task_id = p_task_id FOR UPDATE;
  IF v_found = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'task_not_found';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);
  IF v_state = 'pending' THEN
    UPDATE pc_durable_tasks
       SET state = 'cancelled', cancel_requested = 1, error_code = 'cancelled', finished_at = v_now, updated_at = v_now
     WHERE task_id = p_task_id;
    SET v_outcome = 'cancelled';
  ELSEIF v_state = 'running' THEN
    UPDATE pc_durable_tasks SET cancel_requested = 1, updated_at = v_now WHERE task_id = p_task_id;
    SET v_outcome = 'cancel_requested';
  ELSE
    SET v_outcome = 'already_terminal';
  END IF;
  COMMIT;
  SELECT task_id, state, cancel_requested, v_outcome AS outcome FROM pc_durable_tasks WHERE task_id = p_task_id;
END
