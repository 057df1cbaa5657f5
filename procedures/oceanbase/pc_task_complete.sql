-- Operation: pc_task_complete   (SQLite twin: sql/sqlite/pc_task_complete.sql; TypeScript: TaskStore.complete)
-- Purpose: terminal success of the current attempt: state 'succeeded', result stored, owner and
--   lease released, dedupe key released (active_dedupe_key becomes NULL). Fenced by token and an
--   unexpired lease in the same transaction; a late owner is rejected and leaves no trace.
--   A recorded cancel raises cancel_requested (the caller's transaction, the handler's
--   ctx.onComplete writes with it, rolls back; the attempt then ends cancelled with its failure
--   hook); the runner's 'timeout' verdict raises attempt_lost. The rules are those of
--   internal/pc_aps_task_complete_attempt.sql (since migration 0027), which this calls.
-- Transaction: runs INSIDE the caller's transaction (the handler's last domain writes commit with it).
-- Parameters:
--   p_task_id BIGINT, p_attempt_token CHAR(36), p_result MEDIUMTEXT (JSON) NULL
-- Result: one row (task_id, state='succeeded', attempt_count, finished_at)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost, cancel_requested.
CREATE PROCEDURE pc_task_complete(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36),
  IN p_result        MEDIUMTEXT
)
BEGIN
  CALL pc_aps_task_complete_attempt(p_task_id, p_attempt_token, p_result);
  SELECT task_id, state, attempt_count, finished_at FROM pc_durable_tasks WHERE task_id = p_task_id;
END
