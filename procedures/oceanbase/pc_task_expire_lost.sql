-- Operation: pc_task_expire_lost   (SQLite twin: sql/sqlite/pc_task_expire_lost.sql; TypeScript: TaskStore.expireLost)
-- Purpose: the reconciler ends a lost attempt: only if the task still runs under p_expected_token
--   and its lease has expired (database clock). Without p_requeue the task fails with error
--   'lost' (the task type's failure hook runs in the same transaction, after this call reported
--   outcome 'failed'; the row stays locked until the caller commits); with
--   p_requeue (only for handlers that declare idempotent, fenced side effects) it returns to
--   'pending' for another attempt.
-- Transaction: runs INSIDE the caller's transaction.
-- Parameters:
--   p_task_id BIGINT, p_expected_token CHAR(36), p_requeue TINYINT (0/1)
-- Result: one row (task_id, state, outcome 'failed' | 'requeued' | 'not_lost')
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found.
CREATE PROCEDURE pc_task_expire_lost(
  IN p_task_id        BIGINT,
  IN p_expected_token CHAR(36),
  IN p_requeue        TINYINT
)
BEGIN
  DECLARE v_found   INT DEFAULT 1;
  DECLARE v_state   VARCHAR(16);
  DECLARE v_token   CHAR(36);
  DECLARE v_lease   DATETIME(3);
  DECLARE v_outcome VARCHAR(16) DEFAULT 'not_lost';
  DECLARE v_now     DATETIME(3);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  SELECT state, attempt_token, lease_expires_at INTO v_state, v_token, v_lease
    FROM pc_durable_tasks WHERE task_id = p_task_id FOR UPDATE;
  IF v_found = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'task_not_found';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);
  IF v_state = 'running' AND v_token = p_expected_token AND v_lease <= v_now THEN
    IF p_requeue = 1 THEN
      UPDATE pc_durable_tasks
         SET state = 'pending', attempt_token = NULL, attempt_owner = NULL, lease_expires_at = NULL, updated_at = v_now
       WHERE task_id = p_task_id;
      SET v_outcome = 'requeued';
    ELSE
      UPDATE pc_durable_tasks
         SET state = 'failed', error_code = 'lost', error_message = 'the attempt stopped heartbeating and its lease expired',
             attempt_owner = NULL, lease_expires_at = NULL, finished_at = v_now, updated_at = v_now
       WHERE task_id = p_task_id;
      SET v_outcome = 'failed';
    END IF;
  END IF;
  SELECT task_id, state, v_outcome AS outcome FROM pc_durable_tasks WHERE task_id = p_task_id;
END
