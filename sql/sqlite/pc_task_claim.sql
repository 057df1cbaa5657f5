-- Operation: pc_task_claim   (MySQL twin: procedures/oceanbase/pc_task_claim.sql; TypeScript: TaskStore.claim)
-- Purpose: atomically claim the oldest pending task of a type the worker knows, with a fresh
--   attempt token, attempt_count + 1 and a lease from the database clock, unless the database cap
--   (ADR T6: pc_durable_task_control.capacity of the 'claims' row, 4 after `migrate up`, changed
--   only by pc_task_set_capacity) of running tasks is reached; no process setting can exceed it.
--   Only 'pending' tasks are taken; a task of a type not in :task_types stays pending for a worker
--   that knows it (rolling deploys). Nothing is claimed while the maintenance window is on
--   (pending tasks wait; running attempts are not affected). BEGIN IMMEDIATE makes the count and
--   the claim one decision.
-- Transaction: BEGIN IMMEDIATE ... COMMIT; the claim is sql/sqlite/pc_aps_task_claim_rows.sql with
--   :max_count bound to 1 (included below by the script loader).
-- Parameters: :worker_id, :lease_ms (1000 .. 3600000), :task_types (comma-separated, non-empty)
-- Result: zero rows or one row (task_id, task_type, handler_version, payload, timeout_ms,
--   attempt_count, attempt_token, attempt_owner, lease_expires_at, resumed_from_task_id, db_now)
-- Errors (message): invalid_argument, capacity_not_set.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :worker_id IS NULL OR :worker_id = '' OR :lease_ms IS NULL OR :lease_ms < 1000 OR :lease_ms > 3600000
    OR :task_types IS NULL OR :task_types = '';
-- The claim body of pc_task_claim_batch, for one task (the MySQL twin calls the batch with 1).
-- @include pc_aps_task_claim_rows max_count=1
COMMIT;
