-- Operation: pc_task_expire_lost   (SQLite twin: sql/sqlite/pc_task_expire_lost.sql; TypeScript: TaskStore.expireLost)
-- Purpose: the reconciler ends a lost attempt: only if the task still runs under p_expected_token
--   and its lease has expired (database clock); otherwise nothing changes ('not_lost'). An
--   expired lease cannot be renewed, so the attempt's worker can no longer write (every attempt
--   write asserts a live lease): ending it here is safe even while that process still runs.
--   A verdict its runner recorded before (pc_task_record_verdict: 'timeout',
--   'interrupted_by_shutdown') is the one recorded, not 'lost', also when that runner died.
--   Decided under the row lock, in this order:
--     p_give_up = 1          'gave_up': failed with error 'failure_hook_failed' (the caller's
--                            failure hook kept failing; it does NOT run again; domain rows must be
--                            repaired by hand).
--     verdict 'timeout'      'failed' with error 'timeout' (never requeued).
--     cancel_requested = 1   'cancelled': a cancelled task that is lost is not run again.
--     p_requeue = 1 and attempt_count < p_max_attempts
--                            'requeued': back to 'pending' for another attempt (only for handlers
--                            that declare idempotent, fenced side effects).
--     p_requeue = 1 otherwise 'exhausted': failed with error 'retries_exhausted'.
--     otherwise              'failed': failed with the recorded verdict, else error 'lost'.
--   For 'cancelled', 'exhausted' and 'failed' the task type's failure hook runs in the same
--   transaction, after this call (the row stays locked until the caller commits).
-- Transaction: runs INSIDE the caller's transaction.
-- Parameters:
--   p_task_id BIGINT, p_expected_token CHAR(36), p_requeue TINYINT (0/1),
--   p_max_attempts INT (>= 1; attempts a requeued task may reach), p_give_up TINYINT (0/1)
-- Result: one row (task_id, state, outcome 'failed' | 'requeued' | 'exhausted' | 'cancelled' |
--   'gave_up' | 'not_lost')
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, invalid_argument.
CREATE PROCEDURE pc_task_expire_lost(
  IN p_task_id        BIGINT,
  IN p_expected_token CHAR(36),
  IN p_requeue        TINYINT,
  IN p_max_attempts   INT,
  IN p_give_up        TINYINT
)
BEGIN
  DECLARE v_found    INT DEFAULT 1;
  DECLARE v_state    VARCHAR(16);
  DECLARE v_token    CHAR(36);
  DECLARE v_lease    DATETIME(3);
  DECLARE v_cancel   INT;
  DECLARE v_attempts INT;
  DECLARE v_verdict  VARCHAR(32);
  DECLARE v_outcome  VARCHAR(16) DEFAULT 'not_lost';
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
  IF v_state = 'running' AND v_token = p_expected_token AND v_lease <= v_now THEN
    IF p_give_up = 1 THEN
      UPDATE pc_durable_tasks
         SET state = 'failed', error_code = 'failure_hook_failed',
             error_message = 'the attempt was lost and its failure hook kept failing; the domain rows were not converged',
             attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
       WHERE task_id = p_task_id;
      SET v_outcome = 'gave_up';
    ELSEIF v_verdict = 'timeout' THEN
      UPDATE pc_durable_tasks
         SET state = 'failed', error_code = 'timeout',
             error_message = 'the task exceeded its timeout; its worker stopped heartbeating while it was being stopped',
             attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
       WHERE task_id = p_task_id;
      SET v_outcome = 'failed';
    ELSEIF v_cancel = 1 THEN
      UPDATE pc_durable_tasks
         SET state = 'cancelled', error_code = 'cancelled',
             attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
       WHERE task_id = p_task_id;
      SET v_outcome = 'cancelled';
    ELSEIF p_requeue = 1 AND v_attempts < p_max_attempts THEN
      UPDATE pc_durable_tasks
         SET state = 'pending', attempt_token = NULL, attempt_owner = NULL, lease_expires_at = NULL,
             stop_verdict = NULL, updated_at = v_now
       WHERE task_id = p_task_id;
      SET v_outcome = 'requeued';
    ELSEIF p_requeue = 1 THEN
      UPDATE pc_durable_tasks
         SET state = 'failed', error_code = 'retries_exhausted',
             error_message = CONCAT('the attempt was lost and the task reached its maximum of ', p_max_attempts, ' attempts'),
             attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
       WHERE task_id = p_task_id;
      SET v_outcome = 'exhausted';
    ELSE
      UPDATE pc_durable_tasks
         SET state = 'failed', error_code = COALESCE(v_verdict, 'lost'),
             error_message = CASE WHEN v_verdict IS NULL THEN 'the attempt stopped heartbeating and its lease expired'
                                  ELSE 'the worker host shut down while the attempt ran; its lease expired before it was converged' END,
             attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
       WHERE task_id = p_task_id;
      SET v_outcome = 'failed';
    END IF;
  END IF;
  SELECT task_id, state, v_outcome AS outcome FROM pc_durable_tasks WHERE task_id = p_task_id;
END
