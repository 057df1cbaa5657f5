-- Operation: pc_task_claim_batch   (MySQL twin: procedures/oceanbase/pc_task_claim_batch.sql; TypeScript: TaskStore.claimBatch)
-- Purpose: claim up to :max_count of the oldest pending tasks of the worker's types in one
--   transaction, each as pc_task_claim claims one, never past the database cap (ADR T6):
--   at most capacity - running tasks (the 'claims' row of pc_durable_task_control) are taken,
--   only 'pending' ones of the listed types, each with its own attempt token, attempt_count + 1
--   and a lease from the database clock; nothing during maintenance. BEGIN IMMEDIATE makes the
--   count and the claims one decision.
-- Transaction: BEGIN IMMEDIATE ... COMMIT; the claims are sql/sqlite/pc_aps_task_claim_rows.sql
--   (included below by the script loader, shared with pc_task_succeed_batch since 0015).
-- Parameters: :worker_id, :lease_ms (1000 .. 3600000), :task_types (comma-separated, non-empty),
--   :max_count (1 .. 100)
-- Result: zero to :max_count rows (task_id, task_type, handler_version, payload, timeout_ms,
--   attempt_count, attempt_token, attempt_owner, lease_expires_at, resumed_from_task_id, db_now),
--   in no particular order (the caller sorts by task_id).
-- Errors (message): invalid_argument, capacity_not_set.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :worker_id IS NULL OR :worker_id = '' OR :lease_ms IS NULL OR :lease_ms < 1000 OR :lease_ms > 3600000
    OR :task_types IS NULL OR :task_types = '' OR :max_count IS NULL OR :max_count < 1 OR :max_count > 100;
-- @include pc_aps_task_claim_rows
COMMIT;
