-- Operation: pc_task_fail   (MySQL twin: procedures/oceanbase/pc_task_fail.sql; TypeScript: TaskStore.fail)
-- Purpose: terminal failure reported by the current attempt ('failed', error code and message,
--   owner, lease and dedupe key released); the failure hook runs in the same transaction.
-- Transaction: runs INSIDE the caller's transaction; called alone, wrapped in BEGIN IMMEDIATE.
-- Parameters: :task_id, :attempt_token, :error_code, :error_message
-- Result: one row (task_id, state='failed', attempt_count, finished_at)
-- Errors (message): task_not_found, attempt_lost.
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
INSERT INTO pc_aps_signals (code)
SELECT 'attempt_lost'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_durable_task_live_attempts
    WHERE task_id = :task_id AND attempt_token = :attempt_token);
UPDATE pc_durable_tasks
   SET state = 'failed', error_code = COALESCE(:error_code, 'failed'), error_message = :error_message,
       attempt_owner = NULL, lease_expires_at = NULL, finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'), updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = :task_id;
SELECT task_id, state, attempt_count, finished_at FROM pc_durable_tasks WHERE task_id = :task_id;
