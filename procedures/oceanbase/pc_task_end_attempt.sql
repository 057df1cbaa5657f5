-- Operation: pc_task_end_attempt   (SQLite twin: sql/sqlite/pc_task_end_attempt.sql; TypeScript: TaskStore.endAttempt)
-- Purpose: the runner ends a LIVE attempt whose worker process stopped without a terminal write
--   (timeout, crash of the child while its host runs, graceful shutdown of the worker host).
--   Fenced like every attempt write (pc_task_assert_attempt: running, same token, unexpired lease,
--   row locked). Decided under the row lock, in this order:
--     cancel_requested = 1   'cancelled' (the intent wins; the task is not run again).
--     p_requeue = 1 and attempt_count < p_max_attempts
--                            'requeued': back to 'pending' (only for handlers that declare
--                            idempotent, fenced side effects; never for a timeout, a verdict).
--     p_requeue = 1 otherwise 'exhausted': failed with error 'retries_exhausted'.
--     otherwise              'failed' with p_error_code / p_error_message.
--   For every outcome but 'requeued' the task type's failure hook runs in the same transaction,
--   after this call.
-- Transaction: runs INSIDE the caller's transaction.
-- Parameters:
--   p_task_id BIGINT, p_attempt_token CHAR(36), p_requeue TINYINT (0/1), p_max_attempts INT (>= 1),
--   p_error_code VARCHAR(64), p_error_message VARCHAR(2048)
-- Result: one row (task_id, state, outcome 'failed' | 'requeued' | 'exhausted' | 'cancelled')
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost, invalid_argument.
CREATE PROCEDURE pc_task_end_attempt(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36),
  IN p_requeue       TINYINT,
  IN p_max_attempts  INT,
  IN p_error_code    VARCHAR(64),
  IN p_error_message VARCHAR(2048)
)
BEGIN
  DECLARE v_cancel   INT;
  DECLARE v_attempts INT;
  DECLARE v_outcome  VARCHAR(16);
  DECLARE v_now      DATETIME(3);
  IF p_max_attempts IS NULL OR p_max_attempts < 1 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  CALL pc_task_assert_attempt(p_task_id, p_attempt_token);
  SELECT cancel_requested, attempt_count INTO v_cancel, v_attempts FROM pc_durable_tasks WHERE task_id = p_task_id;
  SET v_now = UTC_TIMESTAMP(3);
  IF v_cancel = 1 THEN
    UPDATE pc_durable_tasks
       SET state = 'cancelled', error_code = 'cancelled',
           attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
     WHERE task_id = p_task_id;
    SET v_outcome = 'cancelled';
  ELSEIF p_requeue = 1 AND v_attempts < p_max_attempts THEN
    UPDATE pc_durable_tasks
       SET state = 'pending', attempt_token = NULL, attempt_owner = NULL, lease_expires_at = NULL, updated_at = v_now
     WHERE task_id = p_task_id;
    SET v_outcome = 'requeued';
  ELSEIF p_requeue = 1 THEN
    UPDATE pc_durable_tasks
       SET state = 'failed', error_code = 'retries_exhausted',
           error_message = CONCAT(COALESCE(p_error_message, 'the attempt ended without a terminal write'), ' (maximum of ', p_max_attempts, ' attempts reached)'),
           attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
     WHERE task_id = p_task_id;
    SET v_outcome = 'exhausted';
  ELSE
    UPDATE pc_durable_tasks
       SET state = 'failed', error_code = COALESCE(p_error_code, 'failed'), error_message = p_error_message,
           attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
     WHERE task_id = p_task_id;
    SET v_outcome = 'failed';
  END IF;
  SELECT task_id, state, v_outcome AS outcome FROM pc_durable_tasks WHERE task_id = p_task_id;
END
