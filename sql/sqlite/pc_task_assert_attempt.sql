-- Operation: pc_task_assert_attempt   (MySQL twin: procedures/oceanbase/pc_task_assert_attempt.sql; TypeScript: TaskStore.assertAttempt)
-- Purpose: fencing of a durable task attempt: the task must be running under this token with an
--   unexpired lease (database clock). A write statement, so inside the caller's BEGIN IMMEDIATE
--   the write lock is held from the check until commit.
-- Transaction: runs INSIDE the caller's BEGIN IMMEDIATE transaction.
-- Parameters: :task_id, :attempt_token
-- Result: none.
-- Errors (message): task_not_found, attempt_lost.
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
INSERT INTO pc_aps_signals (code)
SELECT 'attempt_lost'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_durable_task_live_attempts
    WHERE task_id = :task_id AND attempt_token = :attempt_token);
