-- Operation: pc_task_end_attempt   (SQLite twin: sql/sqlite/pc_task_end_attempt.sql; TypeScript: TaskStore.endAttempt)
-- Purpose: the runner ends an attempt whose worker process stopped without a terminal write
--   (timeout, crash of the child while its host runs, graceful shutdown, a lost attempt), with the
--   verdict it reached, in the terminal transaction (the failure hook runs after this call).
--   Fence: the row is locked (FOR UPDATE) and must run under p_attempt_token. The lease must be
--   live, unless p_worker_exited = 1: the runner saw the attempt's worker process exit, so nobody
--   may write for this attempt any more (its process is gone; a transaction it left open died
--   with its connection and holds no lock we could pass, since we hold the row lock now), and
--   an expired lease cannot be renewed by anyone. Then the verdict the runner reached is recorded
--   whatever the lease did meanwhile (a blocked event loop that let it expire during the grace
--   period does not turn a timeout into a loss). A reconciler that ended the attempt first
--   changed state or token: attempt_lost, and its outcome stands.
--   The code is the recorded verdict (pc_task_record_verdict) if any, else p_error_code; a
--   worker that reported 'attempt_lost' after its lease expired (database clock) is 'lost', as
--   the reconciler would record it ('attempt_lost' stays for a domain row taken over under a
--   live lease).
--   Decided under the row lock, in this order:
--     code 'timeout' recorded  'failed' with 'timeout' (a verdict: never requeued, even for
--                            idempotent types; it was recorded before any cancel).
--     cancel_requested = 1   'cancelled' (the intent wins; the task is not run again).
--     p_requeue = 1, code is not 'timeout' and attempt_count < p_max_attempts
--                            'requeued': back to 'pending' (only for handlers that declare
--                            idempotent, fenced side effects).
--     p_requeue = 1 otherwise (code not 'timeout') 'exhausted': failed with 'retries_exhausted'.
--     otherwise              'failed' with the code and p_error_message.
--   For every outcome but 'requeued' the task type's failure hook runs in the same transaction,
--   after this call.
-- Transaction: runs INSIDE the caller's transaction.
-- Parameters:
--   p_task_id BIGINT, p_attempt_token CHAR(36), p_requeue TINYINT (0/1), p_max_attempts INT (>= 1),
--   p_error_code VARCHAR(64), p_error_message VARCHAR(2048), p_worker_exited TINYINT (0/1)
-- Result: one row (task_id, state, outcome 'failed' | 'requeued' | 'exhausted' | 'cancelled')
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost, invalid_argument.
CREATE PROCEDURE pc_task_end_attempt(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36),
  IN p_requeue       TINYINT,
  IN p_max_attempts  INT,
  IN p_error_code    VARCHAR(64),
  IN p_error_message VARCHAR(2048),
  IN p_worker_exited TINYINT
)
BEGIN
  DECLARE v_found    INT DEFAULT 1;
  DECLARE v_state    VARCHAR(16);
  DECLARE v_token    CHAR(36);
  DECLARE v_lease    DATETIME(3);
  DECLARE v_cancel   INT;
  DECLARE v_attempts INT;
  DECLARE v_verdict  VARCHAR(32);
  DECLARE v_code     VARCHAR(64);
  DECLARE v_message  VARCHAR(2048);
  DECLARE v_outcome  VARCHAR(16);
  DECLARE v_now      DATETIME(3);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  IF p_max_attempts IS NULL OR p_max_attempts < 1 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SELECT state, attempt_token, lease_expires_at, cancel_requested, attempt_count, stop_verdict
    INTO v_state, v_token, v_lease, v_cancel, v_attempts, v_verdict
    FROM pc_durable_tasks WHERE task_id = p_task_id FOR UPDATE;
  IF v_found = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'task_not_found';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);
  IF v_state <> 'running' OR v_token IS NULL OR p_attempt_token IS NULL OR v_token <> p_attempt_token
     OR v_lease IS NULL OR (v_lease <= v_now AND COALESCE(p_worker_exited, 0) <> 1) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'attempt_lost';
  END IF;
  SET v_code = COALESCE(v_verdict, CASE WHEN p_error_code = 'attempt_lost' AND v_lease <= v_now THEN 'lost' ELSE p_error_code END, 'failed');
  SET v_message = CASE WHEN v_verdict IS NULL AND v_code = 'lost' AND p_error_code = 'attempt_lost' THEN 'the attempt stopped heartbeating and its lease expired'
                       WHEN v_verdict IS NULL OR v_verdict = p_error_code THEN p_error_message
                       WHEN v_verdict = 'timeout' THEN 'the task exceeded its timeout'
                       ELSE 'the worker host shut down while the attempt ran' END;
  IF v_verdict = 'timeout' THEN
    UPDATE pc_durable_tasks
       SET state = 'failed', error_code = 'timeout', error_message = v_message,
           attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
     WHERE task_id = p_task_id;
    SET v_outcome = 'failed';
  ELSEIF v_cancel = 1 THEN
    UPDATE pc_durable_tasks
       SET state = 'cancelled', error_code = 'cancelled',
           attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
     WHERE task_id = p_task_id;
    SET v_outcome = 'cancelled';
  ELSEIF p_requeue = 1 AND v_code <> 'timeout' AND v_attempts < p_max_attempts THEN
    UPDATE pc_durable_tasks
       SET state = 'pending', attempt_token = NULL, attempt_owner = NULL, lease_expires_at = NULL,
           stop_verdict = NULL, updated_at = v_now
     WHERE task_id = p_task_id;
    SET v_outcome = 'requeued';
  ELSEIF p_requeue = 1 AND v_code <> 'timeout' THEN
    UPDATE pc_durable_tasks
       SET state = 'failed', error_code = 'retries_exhausted',
           error_message = CONCAT(COALESCE(v_message, 'the attempt ended without a terminal write'), ' (maximum of ', p_max_attempts, ' attempts reached)'),
           attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
     WHERE task_id = p_task_id;
    SET v_outcome = 'exhausted';
  ELSE
    UPDATE pc_durable_tasks
       SET state = 'failed', error_code = v_code, error_message = v_message,
           attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
     WHERE task_id = p_task_id;
    SET v_outcome = 'failed';
  END IF;
  SELECT task_id, state, v_outcome AS outcome FROM pc_durable_tasks WHERE task_id = p_task_id;
END
