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
--   cancelled between the read and the update is skipped (up to 3 candidates per call).
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
  DECLARE v_found    INT DEFAULT 1;
  DECLARE v_running  INT DEFAULT 0;
  DECLARE v_capacity INT DEFAULT NULL;
  DECLARE v_task_id  BIGINT DEFAULT NULL;
  DECLARE v_token    CHAR(36) DEFAULT NULL;
  DECLARE v_now      DATETIME(3);
  DECLARE v_taken    INT DEFAULT 0;
  DECLARE v_tries    INT DEFAULT 0;
  DECLARE v_paused   INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_worker_id IS NULL OR p_worker_id = '' OR p_lease_ms IS NULL OR p_lease_ms < 1000 OR p_lease_ms > 3600000
     OR p_task_types IS NULL OR p_task_types = '' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  SELECT capacity INTO v_capacity FROM pc_durable_task_control WHERE name = 'claims' FOR UPDATE;
  IF v_found = 0 OR v_capacity IS NULL THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'capacity_not_set';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);
  IF EXISTS (SELECT 1 FROM pc_artifact_processing_runtime WHERE runtime_id = 1 AND maintenance = 1) THEN
    SET v_paused = 1;
  END IF;
  SELECT COUNT(*) INTO v_running FROM pc_durable_tasks WHERE state = 'running';
  IF v_paused = 0 AND v_running < v_capacity THEN
    claim_loop: WHILE v_taken = 0 AND v_tries < 3 DO
      SET v_tries = v_tries + 1;
      SET v_found = 1;
      SET v_task_id = NULL;
      -- Non-locking read: never waits for (nor sees) a submission that has not committed.
      SELECT task_id INTO v_task_id FROM pc_durable_tasks
       WHERE state = 'pending' AND FIND_IN_SET(task_type COLLATE utf8mb4_bin, p_task_types COLLATE utf8mb4_bin) > 0
       ORDER BY task_id LIMIT 1;
      IF v_found = 0 OR v_task_id IS NULL THEN
        LEAVE claim_loop;
      END IF;
      SET v_token = UUID();
      UPDATE pc_durable_tasks
         SET state = 'running', attempt_count = attempt_count + 1, attempt_token = v_token,
             attempt_owner = p_worker_id, heartbeat_at = v_now,
             lease_expires_at = DATE_ADD(v_now, INTERVAL p_lease_ms * 1000 MICROSECOND),
             started_at = COALESCE(started_at, v_now), updated_at = v_now
       WHERE task_id = v_task_id AND state = 'pending';
      SELECT COUNT(*) INTO v_taken FROM pc_durable_tasks WHERE task_id = v_task_id AND attempt_token = v_token;
    END WHILE claim_loop;
  END IF;
  COMMIT;

  SELECT task_id, task_type, handler_version, payload, timeout_ms, attempt_count, attempt_token,
         attempt_owner, lease_expires_at, resumed_from_task_id, v_now AS db_now
    FROM pc_durable_tasks
   WHERE task_id = v_task_id AND attempt_token = v_token;
END
