-- Operation: pc_task_expire_lost   (MySQL twin: procedures/oceanbase/pc_task_expire_lost.sql; TypeScript: TaskStore.expireLost)
-- Purpose: the reconciler ends a lost attempt, only if the task still runs under
--   :expected_token and its lease expired (else 'not_lost'; an expired lease cannot be renewed,
--   so the attempt's worker can no longer write), in this order: :give_up = 1 -> 'gave_up'
--   (failed, error 'failure_hook_failed', the failing hook does not run again); a recorded
--   'timeout' verdict (pc_task_record_verdict) -> 'failed' with 'timeout', never requeued;
--   cancel_requested -> 'cancelled'; :requeue = 1 (idempotent, fenced handlers only) and
--   attempt_count < :max_attempts -> 'requeued' (pending); :requeue = 1 otherwise -> 'exhausted'
--   (failed, error 'retries_exhausted'); otherwise 'failed' with the recorded verdict, else 'lost'. The failure hook
--   runs in the same transaction for 'cancelled', 'exhausted' and 'failed'.
-- Transaction: runs INSIDE the caller's transaction; called alone, wrapped in BEGIN IMMEDIATE.
-- Parameters: :task_id, :expected_token, :requeue (0/1), :max_attempts (>= 1), :give_up (0/1)
-- Result: one row (task_id, state, outcome 'failed' | 'requeued' | 'exhausted' | 'cancelled' |
--   'gave_up' | 'not_lost')
-- Errors (message): task_not_found, invalid_argument.
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' WHERE :max_attempts IS NULL OR :max_attempts < 1;
UPDATE pc_durable_tasks
   SET state = CASE WHEN :give_up = 1 THEN 'failed'
                    WHEN stop_verdict = 'timeout' THEN 'failed'
                    WHEN cancel_requested = 1 THEN 'cancelled'
                    WHEN :requeue = 1 AND attempt_count < :max_attempts THEN 'pending'
                    ELSE 'failed' END,
       attempt_token = CASE WHEN :give_up <> 1 AND COALESCE(stop_verdict, '') <> 'timeout' AND cancel_requested <> 1 AND :requeue = 1 AND attempt_count < :max_attempts
                            THEN NULL ELSE attempt_token END,
       stop_verdict = CASE WHEN :give_up <> 1 AND COALESCE(stop_verdict, '') <> 'timeout' AND cancel_requested <> 1 AND :requeue = 1 AND attempt_count < :max_attempts
                           THEN NULL ELSE stop_verdict END,
       error_code = CASE WHEN :give_up = 1 THEN 'failure_hook_failed'
                         WHEN stop_verdict = 'timeout' THEN 'timeout'
                         WHEN cancel_requested = 1 THEN 'cancelled'
                         WHEN :requeue = 1 AND attempt_count < :max_attempts THEN error_code
                         WHEN :requeue = 1 THEN 'retries_exhausted'
                         ELSE COALESCE(stop_verdict, 'lost') END,
       error_message = CASE WHEN :give_up = 1 THEN 'the attempt was lost and its failure hook kept failing; the domain rows were not converged'
                            WHEN stop_verdict = 'timeout' THEN 'the task exceeded its timeout; its worker stopped heartbeating while it was being stopped'
                            WHEN cancel_requested = 1 THEN error_message
                            WHEN :requeue = 1 AND attempt_count < :max_attempts THEN error_message
                            WHEN :requeue = 1 THEN 'the attempt was lost and the task reached its maximum of ' || :max_attempts || ' attempts'
                            WHEN stop_verdict IS NOT NULL THEN 'the worker host shut down while the attempt ran; its lease expired before it was converged'
                            ELSE 'the attempt stopped heartbeating and its lease expired' END,
       finished_at = CASE WHEN :give_up <> 1 AND COALESCE(stop_verdict, '') <> 'timeout' AND cancel_requested <> 1 AND :requeue = 1 AND attempt_count < :max_attempts
                          THEN finished_at ELSE strftime('%Y-%m-%d %H:%M:%f', 'now') END,
       attempt_owner = NULL, lease_expires_at = NULL, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = :task_id AND state = 'running' AND attempt_token = :expected_token
   AND lease_expires_at <= strftime('%Y-%m-%d %H:%M:%f', 'now');
SELECT task_id, state,
       CASE WHEN changes() = 0 THEN 'not_lost'
            WHEN state = 'pending' THEN 'requeued'
            WHEN state = 'cancelled' THEN 'cancelled'
            WHEN error_code = 'failure_hook_failed' THEN 'gave_up'
            WHEN error_code = 'retries_exhausted' THEN 'exhausted'
            ELSE 'failed' END AS outcome
  FROM pc_durable_tasks WHERE task_id = :task_id;
