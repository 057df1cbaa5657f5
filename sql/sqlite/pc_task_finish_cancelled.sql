-- Operation: pc_task_finish_cancelled   (MySQL twin: procedures/oceanbase/pc_task_finish_cancelled.sql; TypeScript: TaskStore.finishCancelled)
-- Purpose: a running attempt that saw the cancel intent and cleaned up ends the task 'cancelled'.
-- Transaction: runs INSIDE the caller's transaction; called alone, wrapped in BEGIN IMMEDIATE.
-- Parameters: :task_id, :attempt_token
-- Result: one row (task_id, state='cancelled', attempt_count, finished_at)
-- Errors (message): task_not_found, attempt_lost, invalid_argument (no cancel requested).
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
INSERT INTO pc_aps_signals (code)
SELECT 'attempt_lost'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_durable_task_live_attempts
    WHERE task_id = :task_id AND attempt_token = :attempt_token);
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' FROM pc_durable_tasks WHERE task_id = :task_id AND cancel_requested <> 1;
UPDATE pc_durable_tasks
   SET state = 'cancelled', error_code = 'cancelled', attempt_owner = NULL, lease_expires_at = NULL,
       finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'), updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = :task_id;
SELECT task_id, state, attempt_count, finished_at FROM pc_durable_tasks WHERE task_id = :task_id;
