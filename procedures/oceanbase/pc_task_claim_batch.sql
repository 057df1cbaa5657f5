-- Operation: pc_task_claim_batch   (SQLite twin: sql/sqlite/pc_task_claim_batch.sql; TypeScript: TaskStore.claimBatch)
-- Purpose: claim up to p_max_count of the oldest pending tasks of the worker's types in one transaction, each as pc_task_claim claims one, never past the database cap.
--   The rules are pc_task_claim's, taken once for the batch: the 'claims' row of
--   pc_durable_task_control is locked (FOR UPDATE) and its running count (kept by the triggers of
--   pc_durable_tasks under the same lock since migration 0028) read after it, so at most
--   capacity - running tasks are taken, and no process setting can exceed the cap (ADR T6);
--   only 'pending' tasks are taken, each with its own attempt token (UUID), attempt_count + 1
--   and a lease from the database clock; a task of a type the worker does not list stays
--   pending; nothing is claimed during maintenance. Candidates are found by plain (non-locking)
--   reads in task_id order and taken by an update guarded by state = 'pending' (a task cancelled
--   between the read and the update is skipped; at most p_max_count + 3 candidates per call). One
--   commit for the batch: a relay that finds several free slots takes them in one round trip.
--   The claimed rows are read back by primary key between the first and the last claimed id
--   (since 0024; the running rows' index carries the entries InnoDB has not purged yet, hundreds
--   under a steady flow, each a clustered lookup), unless that range is wide (a requeued old task
--   with new ones), then among the running rows as before (COMPATIBILITY row 116). Since
--   migration 0027 the claims are pc_aps_task_claim_rows (shared with pc_task_succeed_batch),
--   called inside this procedure's transaction; the rows are sent before its COMMIT (a failing
--   COMMIT still ends the call with its error).
-- Locks: the 'claims' row of pc_durable_task_control (FOR UPDATE), then each claimed task row.
-- Transaction: owns its transaction.
-- Parameters:
--   p_worker_id   VARCHAR(128)  the claiming worker (attempt owner)
--   p_lease_ms    INT           lease length, 1000 .. 3600000
--   p_task_types  MEDIUMTEXT    comma-separated task types the worker's registry knows (non-empty)
--   p_max_count   INT           the most tasks to claim, 1 .. 100 (the caller's free capacity)
-- Result: zero to p_max_count rows, oldest first: the claimed tasks (task_id, task_type,
--   handler_version, payload, timeout_ms, attempt_count, attempt_token, attempt_owner,
--   lease_expires_at, resumed_from_task_id, db_now), as pc_task_claim returns one.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  empty worker or type list, lease or count out of range.
--   capacity_not_set  the 'claims' row has no capacity.
CREATE PROCEDURE pc_task_claim_batch(
  IN p_worker_id  VARCHAR(128),
  IN p_lease_ms   INT,
  IN p_task_types MEDIUMTEXT,
  IN p_max_count  INT
)
BEGIN
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  IF p_worker_id IS NULL OR p_worker_id = '' OR p_lease_ms IS NULL OR p_lease_ms < 1000 OR p_lease_ms > 3600000
     OR p_task_types IS NULL OR p_task_types = '' OR p_max_count IS NULL OR p_max_count < 1 OR p_max_count > 100 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  START TRANSACTION;
  CALL pc_aps_task_claim_rows(p_worker_id, p_lease_ms, p_task_types, p_max_count);
  COMMIT;
END
