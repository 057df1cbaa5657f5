-- Operation: pc_task_claim   (SQLite twin: sql/sqlite/pc_task_claim.sql; TypeScript: TaskStore.claim)
-- Purpose: atomically claim the oldest pending task of a type the worker knows, with a fresh
--   attempt token (UUID), attempt_count + 1 and a lease from the database clock, unless the
--   number of running tasks already reaches the database cap (ADR T6): the capacity column of the
--   'claims' row of pc_durable_task_control (4 after `migrate up`; changed only by
--   pc_task_set_capacity). The cap is read under that row's lock, so no process setting can
--   exceed it: the row lock serializes every claim, and under READ COMMITTED the count taken
--   after the lock sees every claim committed before it (no gap or range lock involved). Only
--   'pending' tasks are taken: a duplicate wake-up or a second worker can never take a running
--   task. A worker passes the task types of its registry: a task of a type it does not know
--   (a newer worker's, during a rolling deploy) stays pending for a worker that knows it.
--   While the maintenance window is on (pc_artifact_processing_runtime.maintenance, read without
--   a lock as pc_aps_mark_dirty does) nothing is claimed: pending tasks wait for its end; running
--   attempts are not affected.
--   The candidate is found by a plain (non-locking) read, then taken by an update guarded by
--   state = 'pending': a task whose submitting transaction is still open is invisible (not
--   claimable) and never makes the claim wait while it holds the 'claims' row. A candidate
--   cancelled between the read and the update is skipped (up to 4 candidates per call).
--   Since migration 0025 the body is pc_task_claim_batch with a count of 1: the claim rules have
--   one text on MySQL (the loop, the cap and the read-back are that procedure's).
-- Locks: the 'claims' row of pc_durable_task_control (FOR UPDATE), then the claimed task row.
-- Transaction: owns its transaction.
-- Parameters:
--   p_worker_id   VARCHAR(128)  the claiming worker (attempt owner)
--   p_lease_ms    INT           lease length, 1000 .. 3600000
--   p_task_types  MEDIUMTEXT    comma-separated task types the worker's registry knows (non-empty;
--                               a type never contains a comma: TypeScript validates it)
-- Result: zero rows (nothing claimable, the cap is reached, or maintenance) or one row: the claimed task
--   (task_id, task_type, handler_version, payload, timeout_ms, attempt_count, attempt_token,
--   attempt_owner, lease_expires_at, resumed_from_task_id, db_now)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  empty worker or type list, lease out of range.
--   capacity_not_set  the 'claims' row has no capacity (a database not migrated to 0017).
CREATE PROCEDURE pc_task_claim(
  IN p_worker_id  VARCHAR(128),
  IN p_lease_ms   INT,
  IN p_task_types MEDIUMTEXT
)
BEGIN
  CALL pc_task_claim_batch(p_worker_id, p_lease_ms, p_task_types, 1);
END
