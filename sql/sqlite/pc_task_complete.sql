-- Operation: pc_task_complete   (MySQL twin: procedures/oceanbase/pc_task_complete.sql; TypeScript: TaskStore.complete)
-- Purpose: terminal success of the current attempt: 'succeeded', result stored, owner, lease and
--   dedupe key released; a late owner is rejected and leaves no trace. A running task whose
--   cancel was recorded never ends succeeded: with cancel_requested = 1 it raises
--   cancel_requested (the caller's transaction rolls back; the attempt then ends cancelled with
--   its failure hook); after the runner's 'timeout' verdict it raises attempt_lost.
-- Transaction: runs INSIDE the caller's transaction; called alone, wrapped in BEGIN IMMEDIATE.
-- Parameters: :task_id, :attempt_token, :result (JSON, NULL)
-- Result: one row (task_id, state='succeeded', attempt_count, finished_at)
-- Errors (message): task_not_found, attempt_lost, cancel_requested.
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
INSERT INTO pc_aps_signals (code)
SELECT 'attempt_lost'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_durable_task_live_attempts
    WHERE task_id = :task_id AND attempt_token = :attempt_token);
INSERT INTO pc_aps_signals (code)
SELECT 'attempt_lost' FROM pc_durable_tasks WHERE task_id = :task_id AND stop_verdict = 'timeout';
INSERT INTO pc_aps_signals (code)
SELECT 'cancel_requested' FROM pc_durable_tasks WHERE task_id = :task_id AND cancel_requested = 1;
UPDATE pc_durable_tasks
   SET state = 'succeeded', result = :result, attempt_owner = NULL, lease_expires_at = NULL,
       finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'), updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = :task_id;
SELECT task_id, state, attempt_count, finished_at FROM pc_durable_tasks WHERE task_id = :task_id;
