-- Operation: pc_task_expire_lost   (MySQL twin: procedures/oceanbase/pc_task_expire_lost.sql; TypeScript: TaskStore.expireLost)
-- Purpose: the reconciler ends a lost attempt, only if the task still runs under
--   :expected_token and its lease expired: 'failed' with error 'lost' (failure hook in the same
--   transaction), or back to 'pending' when :requeue = 1 (idempotent, fenced handlers only).
-- Transaction: runs INSIDE the caller's transaction; called alone, wrapped in BEGIN IMMEDIATE.
-- Parameters: :task_id, :expected_token, :requeue (0/1)
-- Result: one row (task_id, state, outcome 'failed' | 'requeued' | 'not_lost')
-- Errors (message): task_not_found.
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
UPDATE pc_durable_tasks
   SET state = CASE WHEN :requeue = 1 THEN 'pending' ELSE 'failed' END,
       attempt_token = CASE WHEN :requeue = 1 THEN NULL ELSE attempt_token END,
       error_code = CASE WHEN :requeue = 1 THEN error_code ELSE 'lost' END,
       error_message = CASE WHEN :requeue = 1 THEN error_message ELSE 'the attempt stopped heartbeating and its lease expired' END,
       finished_at = CASE WHEN :requeue = 1 THEN finished_at ELSE strftime('%Y-%m-%d %H:%M:%f', 'now') END,
       attempt_owner = NULL, lease_expires_at = NULL, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = :task_id AND state = 'running' AND attempt_token = :expected_token
   AND lease_expires_at <= strftime('%Y-%m-%d %H:%M:%f', 'now');
SELECT task_id, state,
       CASE WHEN changes() = 0 THEN 'not_lost' WHEN :requeue = 1 THEN 'requeued' ELSE 'failed' END AS outcome
  FROM pc_durable_tasks WHERE task_id = :task_id;
