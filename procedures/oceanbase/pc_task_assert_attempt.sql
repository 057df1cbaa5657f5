-- Operation: pc_task_assert_attempt   (SQLite twin: sql/sqlite/pc_task_assert_attempt.sql; TypeScript: TaskStore.assertAttempt)
-- Purpose: fencing of a durable task attempt for any progress, result, domain or terminal write:
--   locks the task row (FOR UPDATE) and checks that the task is running under this attempt token
--   with an unexpired lease (database clock). The lock is held until the caller commits.
-- Transaction: runs INSIDE the caller's transaction; never starts or commits one.
-- Parameters:
--   p_task_id        BIGINT
--   p_attempt_token  CHAR(36)   the token returned by pc_task_claim
-- Result: none.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   task_not_found  no such task.
--   attempt_lost    the task is not running, runs under another attempt, or the lease expired.
CREATE PROCEDURE pc_task_assert_attempt(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36)
)
BEGIN
  DECLARE v_found INT DEFAULT 1;
  DECLARE v_state VARCHAR(16);
  DECLARE v_token CHAR(36);
  DECLARE v_lease DATETIME(3);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  SELECT state, attempt_token, lease_expires_at INTO v_state, v_token, v_lease
    FROM pc_durable_tasks WHERE task_id = p_task_id FOR UPDATE;
  IF v_found = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'task_not_found';
  END IF;
  IF v_state <> 'running' OR v_token IS NULL OR p_attempt_token IS NULL OR v_token <> p_attempt_token
     OR v_lease IS NULL OR v_lease <= UTC_TIMESTAMP(3) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'attempt_lost';
  END IF;
END
