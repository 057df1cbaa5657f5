-- Operation: pc_task_end_attempt   (MySQL twin: procedures/oceanbase/pc_task_end_attempt.sql; TypeScript: TaskStore.endAttempt)
-- Purpose: the runner ends a LIVE attempt whose worker stopped without a terminal write (timeout,
--   crash of the child, graceful shutdown), fenced by the attempt (running, same token, unexpired
--   lease), in this order: cancel_requested -> 'cancelled'; :requeue = 1 (idempotent, fenced
--   handlers only; never for a timeout) and attempt_count < :max_attempts -> 'requeued'
--   (pending); :requeue = 1 otherwise -> 'exhausted' (failed, error 'retries_exhausted');
--   otherwise 'failed' with :error_code / :error_message. The failure hook runs in the same
--   transaction for every outcome but 'requeued'.
-- Transaction: runs INSIDE the caller's transaction; called alone, wrapped in BEGIN IMMEDIATE.
-- Parameters: :task_id, :attempt_token, :requeue (0/1), :max_attempts (>= 1), :error_code, :error_message
-- Result: one row (task_id, state, outcome 'failed' | 'requeued' | 'exhausted' | 'cancelled')
-- Errors (message): task_not_found, attempt_lost, invalid_argument.
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' WHERE :max_attempts IS NULL OR :max_attempts < 1;
INSERT INTO pc_aps_signals (code)
SELECT 'attempt_lost'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_durable_task_live_attempts
    WHERE task_id = :task_id AND attempt_token = :attempt_token);
UPDATE pc_durable_tasks
   SET state = CASE WHEN cancel_requested = 1 THEN 'cancelled'
                    WHEN :requeue = 1 AND attempt_count < :max_attempts THEN 'pending'
                    ELSE 'failed' END,
       attempt_token = CASE WHEN cancel_requested <> 1 AND :requeue = 1 AND attempt_count < :max_attempts
                            THEN NULL ELSE attempt_token END,
       error_code = CASE WHEN cancel_requested = 1 THEN 'cancelled'
                         WHEN :requeue = 1 AND attempt_count < :max_attempts THEN error_code
                         WHEN :requeue = 1 THEN 'retries_exhausted'
                         ELSE COALESCE(:error_code, 'failed') END,
       error_message = CASE WHEN cancel_requested = 1 THEN error_message
                            WHEN :requeue = 1 AND attempt_count < :max_attempts THEN error_message
                            WHEN :requeue = 1 THEN COALESCE(:error_message, 'the attempt ended without a terminal write') || ' (maximum of ' || :max_attempts || ' attempts reached)'
                            ELSE :error_message END,
       finished_at = CASE WHEN cancel_requested <> 1 AND :requeue = 1 AND attempt_count < :max_attempts
                          THEN finished_at ELSE strftime('%Y-%m-%d %H:%M:%f', 'now') END,
       attempt_owner = NULL, lease_expires_at = NULL, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = :task_id;
SELECT task_id, state,
       CASE WHEN state = 'pending' THEN 'requeued'
            WHEN state = 'cancelled' THEN 'cancelled'
            WHEN error_code = 'retries_exhausted' AND :requeue = 1 THEN 'exhausted'
            ELSE 'failed' END AS outcome
  FROM pc_durable_tasks WHERE task_id = :task_id;
