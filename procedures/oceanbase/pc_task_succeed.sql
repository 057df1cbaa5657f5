-- Operation: pc_task_succeed   (SQLite twin: sql/sqlite/pc_task_succeed.sql; TypeScript: TaskStore.succeed)
-- Purpose: pc_task_complete in its own transaction, for an attempt whose handler registered no
--   ctx.onComplete writes: START TRANSACTION, CALL pc_task_complete, COMMIT in one call instead
--   of three round trips. The rules (fenced by token and an unexpired lease by the database
--   clock, a recorded cancel or the runner's 'timeout' verdict refuses the success, owner, lease
--   and dedupe key released) are pc_task_complete's only (since migration 0026).
-- Locks: the task row (FOR UPDATE, in pc_task_assert_attempt) until the commit.
-- Transaction: owns its transaction.
-- Parameters:
--   p_task_id BIGINT, p_attempt_token CHAR(36), p_result MEDIUMTEXT (JSON) NULL
-- Result: pc_task_complete's row (task_id, state='succeeded', attempt_count, finished_at), sent
--   before the COMMIT: a failing COMMIT still ends the call with its error (exit handler).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost, cancel_requested
--   (nothing was written: the attempt then ends cancelled with its failure hook).
CREATE PROCEDURE pc_task_succeed(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36),
  IN p_result        MEDIUMTEXT
)
BEGIN
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  START TRANSACTION;
  CALL pc_task_complete(p_task_id, p_attempt_token, p_result);
  COMMIT;
END
