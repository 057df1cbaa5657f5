-- Operation: pc_aps_task_claim_rows   (include-only: the one body of pc_task_claim_batch and pc_task_succeed_batch's claims; MySQL twin: procedures/oceanbase/pc_aps_task_claim_rows.sql)
-- Purpose: claim up to :max_count of the oldest pending tasks of the worker's types, each as
--   pc_task_claim claims one, never past the database cap (ADR T6) (an includer may bind
--   :max_count to an expression of its own, as pc_task_claim and pc_task_succeed_batch do; see
--   src/store/sqlite/script-include.ts): at most capacity - running
--   tasks (the 'claims' row of pc_durable_task_control) are taken, only 'pending' ones of the
--   listed types, each with its own attempt token, attempt_count + 1 and a lease from the
--   database clock; nothing during maintenance. The including script's BEGIN IMMEDIATE makes the
--   count and the claims one decision.
-- Transaction: runs INSIDE the including script's transaction (which validates the parameters).
-- Parameters: :worker_id, :lease_ms (1000 .. 3600000), :task_types (comma-separated, non-empty),
--   :max_count (0 claims none)
-- Result: zero to :max_count rows (task_id, task_type, handler_version, payload, timeout_ms,
--   attempt_count, attempt_token, attempt_owner, lease_expires_at, resumed_from_task_id, db_now),
--   in no particular order (the caller sorts by task_id).
-- Errors (message): capacity_not_set (only when :max_count > 0, as the MySQL callers skip their
--   claims then).
INSERT INTO pc_aps_signals (code)
SELECT 'capacity_not_set'
 WHERE :max_count > 0
   AND NOT EXISTS (SELECT 1 FROM pc_durable_task_control WHERE name = 'claims' AND capacity IS NOT NULL);
UPDATE pc_durable_tasks
   SET state = 'running',
       attempt_count = attempt_count + 1,
       attempt_token = lower(hex(randomblob(16))),
       attempt_owner = :worker_id,
       heartbeat_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
       lease_expires_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '+' || (:lease_ms / 1000.0) || ' seconds'),
       started_at = COALESCE(started_at, strftime('%Y-%m-%d %H:%M:%f', 'now')),
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id IN (SELECT task_id FROM pc_durable_tasks
                    WHERE state = 'pending' AND instr(',' || :task_types || ',', ',' || task_type || ',') > 0
                    ORDER BY task_id
                    -- A negative LIMIT means none in SQLite: the room is clamped at 0.
                    LIMIT max(0, min(:max_count,
                                     (SELECT capacity FROM pc_durable_task_control WHERE name = 'claims')
                                     - (SELECT COUNT(*) FROM pc_durable_tasks WHERE state = 'running'))))
   AND NOT EXISTS (SELECT 1 FROM pc_artifact_processing_runtime WHERE runtime_id = 1 AND maintenance = 1)
RETURNING task_id, task_type, handler_version, payload, timeout_ms, attempt_count, attempt_token,
          attempt_owner, lease_expires_at, resumed_from_task_id, strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now;
