-- Operation: pc_task_claim   (MySQL twin: procedures/oceanbase/pc_task_claim.sql; TypeScript: TaskStore.claim)
-- Purpose: atomically claim the oldest pending task with a fresh attempt token, attempt_count + 1
--   and a lease from the database clock, unless :capacity tasks already run. Only 'pending' tasks
--   are taken. BEGIN IMMEDIATE makes the count and the claim one decision.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters: :worker_id, :lease_ms (1000 .. 3600000), :capacity (>= 1)
-- Result: zero rows or one row (task_id, task_type, handler_version, payload, timeout_ms,
--   attempt_count, attempt_token, attempt_owner, lease_expires_at, resumed_from_task_id, db_now)
-- Errors (message): invalid_argument.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :worker_id IS NULL OR :worker_id = '' OR :lease_ms IS NULL OR :lease_ms < 1000 OR :lease_ms > 3600000
    OR :capacity IS NULL OR :capacity < 1;
UPDATE pc_durable_tasks
   SET state = 'running',
       attempt_count = attempt_count + 1,
       attempt_token = lower(hex(randomblob(16))),
       attempt_owner = :worker_id,
       heartbeat_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
       lease_expires_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '+' || (:lease_ms / 1000.0) || ' seconds'),
       started_at = COALESCE(started_at, strftime('%Y-%m-%d %H:%M:%f', 'now')),
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = (SELECT task_id FROM pc_durable_tasks WHERE state = 'pending' ORDER BY task_id LIMIT 1)
   AND (SELECT COUNT(*) FROM pc_durable_tasks WHERE state = 'running') < :capacity
RETURNING task_id, task_type, handler_version, payload, timeout_ms, attempt_count, attempt_token,
          attempt_owner, lease_expires_at, resumed_from_task_id, strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now;
COMMIT;
