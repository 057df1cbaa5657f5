-- Operation: pc_task_end_attempt   (MySQL twin: procedures/oceanbase/pc_task_end_attempt.sql; TypeScript: TaskStore.endAttempt)
-- Purpose: the runner ends an attempt whose worker process stopped without a terminal write
--   (timeout, crash of the child, graceful shutdown, a lost attempt) with the verdict it reached.
--   Fence: running under :attempt_token; the lease must be live unless :worker_exited = 1 (the
--   runner saw the worker process exit: nobody may write for the attempt any more, and an
--   expired lease cannot be renewed; the reasoning is in the MySQL twin). The code is the
--   recorded verdict (pc_task_record_verdict) if any, else :error_code ('attempt_lost' reported
--   after the lease expired is 'lost', as the reconciler records it). In this order: verdict
--   'timeout' -> 'failed' with 'timeout' (never requeued); cancel_requested -> 'cancelled';
--   :requeue = 1 (idempotent, fenced handlers only), code not 'timeout' and attempt_count <
--   :max_attempts -> 'requeued' (pending); :requeue = 1 otherwise -> 'exhausted' (failed,
--   'retries_exhausted'); otherwise 'failed' with the code. The failure hook runs in the same
--   transaction for every outcome but 'requeued'.
-- Transaction: runs INSIDE the caller's transaction; called alone, wrapped in BEGIN IMMEDIATE.
-- Parameters: :task_id, :attempt_token, :requeue (0/1), :max_attempts (>= 1), :error_code,
--   :error_message, :worker_exited (0/1)
-- Result: one row (task_id, state, outcome 'failed' | 'requeued' | 'exhausted' | 'cancelled')
-- Errors (message): task_not_found, attempt_lost, invalid_argument.
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' WHERE :max_attempts IS NULL OR :max_attempts < 1;
INSERT INTO pc_aps_signals (code)
SELECT 'attempt_lost'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_durable_tasks
    WHERE task_id = :task_id AND state = 'running' AND attempt_token = :attempt_token
      AND lease_expires_at IS NOT NULL
      AND (lease_expires_at > strftime('%Y-%m-%d %H:%M:%f', 'now') OR COALESCE(:worker_exited, 0) = 1));
UPDATE pc_durable_tasks
   SET state = CASE d.outcome WHEN 'requeued' THEN 'pending' WHEN 'cancelled' THEN 'cancelled' ELSE 'failed' END,
       attempt_token = CASE d.outcome WHEN 'requeued' THEN NULL ELSE pc_durable_tasks.attempt_token END,
       stop_verdict = CASE d.outcome WHEN 'requeued' THEN NULL ELSE pc_durable_tasks.stop_verdict END,
       error_code = CASE d.outcome WHEN 'requeued' THEN pc_durable_tasks.error_code WHEN 'cancelled' THEN 'cancelled'
                                   WHEN 'exhausted' THEN 'retries_exhausted' ELSE d.code END,
       error_message = CASE d.outcome WHEN 'requeued' THEN pc_durable_tasks.error_message
                                      WHEN 'cancelled' THEN pc_durable_tasks.error_message
                                      WHEN 'exhausted' THEN COALESCE(d.message, 'the attempt ended without a terminal write') || ' (maximum of ' || :max_attempts || ' attempts reached)'
                                      ELSE d.message END,
       finished_at = CASE d.outcome WHEN 'requeued' THEN pc_durable_tasks.finished_at ELSE strftime('%Y-%m-%d %H:%M:%f', 'now') END,
       attempt_owner = NULL, lease_expires_at = NULL, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
  FROM (SELECT CASE WHEN t.stop_verdict = 'timeout' THEN 'failed'
                    WHEN t.cancel_requested = 1 THEN 'cancelled'
                    WHEN :requeue = 1 AND COALESCE(t.stop_verdict, CASE WHEN :error_code = 'attempt_lost' AND t.lease_expires_at <= strftime('%Y-%m-%d %H:%M:%f', 'now') THEN 'lost' ELSE :error_code END, 'failed') <> 'timeout' AND t.attempt_count < :max_attempts THEN 'requeued'
                    WHEN :requeue = 1 AND COALESCE(t.stop_verdict, CASE WHEN :error_code = 'attempt_lost' AND t.lease_expires_at <= strftime('%Y-%m-%d %H:%M:%f', 'now') THEN 'lost' ELSE :error_code END, 'failed') <> 'timeout' THEN 'exhausted'
                    ELSE 'failed' END AS outcome,
               COALESCE(t.stop_verdict, CASE WHEN :error_code = 'attempt_lost' AND t.lease_expires_at <= strftime('%Y-%m-%d %H:%M:%f', 'now') THEN 'lost' ELSE :error_code END, 'failed') AS code,
               CASE WHEN t.stop_verdict IS NULL AND :error_code = 'attempt_lost' AND t.lease_expires_at <= strftime('%Y-%m-%d %H:%M:%f', 'now')
                    THEN 'the attempt stopped heartbeating and its lease expired'
                    WHEN t.stop_verdict IS NULL OR t.stop_verdict = :error_code THEN :error_message
                    WHEN t.stop_verdict = 'timeout' THEN 'the task exceeded its timeout'
                    ELSE 'the worker host shut down while the attempt ran' END AS message
          FROM pc_durable_tasks AS t WHERE t.task_id = :task_id) AS d
 WHERE pc_durable_tasks.task_id = :task_id;
SELECT task_id, state,
       CASE WHEN state = 'pending' THEN 'requeued'
            WHEN state = 'cancelled' THEN 'cancelled'
            WHEN error_code = 'retries_exhausted' AND :requeue = 1 THEN 'exhausted'
            ELSE 'failed' END AS outcome
  FROM pc_durable_tasks WHERE task_id = :task_id;
