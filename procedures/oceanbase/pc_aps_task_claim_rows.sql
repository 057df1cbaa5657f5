-- Operation: pc_aps_task_claim_rows   (internal: the one body of pc_task_claim_batch and pc_task_succeed_batch's claims; SQLite twin: sql/sqlite/pc_aps_task_claim_rows.sql, included)
-- Purpose: claim up to p_max_count of the oldest pending tasks of the worker's types, each as
--   pc_task_claim claims one, never past the database cap (ADR T6), in the caller's transaction.
--   The rules are pc_task_claim's, taken once for the batch: the 'claims' row of
--   pc_durable_task_control is locked (FOR UPDATE) and its running count read under the lock
--   (since migration 0028 kept by the triggers of pc_durable_tasks, which take the same row lock
--   for every move into or out of 'running': the count is exact for every claim committed
--   before), so at most capacity - running tasks are taken, and no process setting can exceed
--   the cap; only 'pending' tasks are taken, each with its own attempt token (UUID),
--   attempt_count + 1 and a lease from the database clock; a task of a type the worker does not
--   list stays pending; nothing is claimed during maintenance. Candidates are found by plain
--   (non-locking) reads in task_id order and taken by an update guarded by state = 'pending' (a
--   task cancelled between the read and the update is skipped; at most p_max_count + 3
--   candidates per call). The claimed rows are read back by primary key between the first and
--   the last claimed id (the running rows' index carries the entries InnoDB has not purged
--   yet), unless that range is wide (a requeued old task with new ones), then among the running
--   rows (COMPATIBILITY row 116).
-- Locks: the 'claims' row of pc_durable_task_control (FOR UPDATE), then each claimed task row,
--   until the caller commits.
-- Transaction: runs INSIDE the caller's transaction (no START TRANSACTION, COMMIT or handler; the
--   caller validates the parameters).
-- Parameters:
--   p_worker_id   VARCHAR(128)  the claiming worker (attempt owner)
--   p_lease_ms    INT           lease length, 1000 .. 3600000
--   p_task_types  MEDIUMTEXT    comma-separated task types the worker's registry knows (non-empty)
--   p_max_count   INT           the most tasks to claim (0 claims none)
-- Result: zero to p_max_count rows, oldest first: the claimed tasks (task_id, task_type,
--   handler_version, payload, timeout_ms, attempt_count, attempt_token, attempt_owner,
--   lease_expires_at, resumed_from_task_id, db_now), sent before the caller's COMMIT.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   capacity_not_set  the 'claims' row has no capacity.
CREATE PROCEDURE pc_aps_task_claim_rows(
  IN p_worker_id  VARCHAR(128),
  IN p_lease_ms   INT,
  IN p_task_types MEDIUMTEXT,
  IN p_max_count  INT
)
BEGIN
  DECLARE v_found    INT DEFAULT 1;
  DECLARE v_running  INT DEFAULT 0;
  DECLARE v_capacity INT DEFAULT NULL;
  DECLARE v_room     INT DEFAULT 0;
  DECLARE v_task_id  BIGINT DEFAULT NULL;
  DECLARE v_last_id  BIGINT DEFAULT 0;
  DECLARE v_token    CHAR(36) DEFAULT NULL;
  DECLARE v_tokens   VARCHAR(4000) DEFAULT '';
  DECLARE v_now      DATETIME(3);
  DECLARE v_taken    INT DEFAULT 0;
  DECLARE v_first_id BIGINT DEFAULT NULL;
  DECLARE v_maint    INT DEFAULT 0;
  DECLARE v_tries    INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;

  -- The running count is the row's, not a COUNT(*): the state index keeps an entry for every
  -- task that left 'running' until InnoDB purges it, hundreds under a steady flow (row 120).
  SELECT capacity, running INTO v_capacity, v_running FROM pc_durable_task_control WHERE name = 'claims' FOR UPDATE;
  IF v_found = 0 OR v_capacity IS NULL THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'capacity_not_set';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);
  SELECT COALESCE(MAX(maintenance), 0) INTO v_maint FROM pc_artifact_processing_runtime WHERE runtime_id = 1;
  SET v_room = IF(v_maint = 1, 0, LEAST(p_max_count, v_capacity - v_running));
  claim_loop: WHILE v_taken < v_room AND v_tries < v_room + 3 DO
    SET v_tries = v_tries + 1;
    SET v_found = 1;
    SET v_task_id = NULL;
    -- Non-locking read: never waits for (nor sees) a submission that has not committed.
    SELECT task_id INTO v_task_id FROM pc_durable_tasks
     WHERE state = 'pending' AND task_id > v_last_id
       AND FIND_IN_SET(task_type COLLATE utf8mb4_bin, p_task_types COLLATE utf8mb4_bin) > 0
     ORDER BY task_id LIMIT 1;
    IF v_found = 0 OR v_task_id IS NULL THEN
      LEAVE claim_loop;
    END IF;
    SET v_last_id = v_task_id;
    SET v_token = UUID();
    UPDATE pc_durable_tasks
       SET state = 'running', attempt_count = attempt_count + 1, attempt_token = v_token,
           attempt_owner = p_worker_id, heartbeat_at = v_now,
           lease_expires_at = DATE_ADD(v_now, INTERVAL p_lease_ms * 1000 MICROSECOND),
           started_at = COALESCE(started_at, v_now), updated_at = v_now
     WHERE task_id = v_task_id AND state = 'pending';
    -- The update turns 'pending' into 'running': a matched row is a changed row (row 11).
    IF ROW_COUNT() = 1 THEN
      SET v_taken = v_taken + 1;
      SET v_first_id = COALESCE(v_first_id, v_task_id);
      SET v_tokens = CONCAT(v_tokens, IF(v_tokens = '', '', ','), v_token);
    END IF;
  END WHILE claim_loop;

  -- The claimed rows by their tokens (this transaction's own writes): v_last_id is the last
  -- candidate, at or above the last claim.
  IF v_first_id IS NULL OR v_last_id - v_first_id <= 1000 THEN
    SELECT task_id, task_type, handler_version, payload, timeout_ms, attempt_count, attempt_token,
           attempt_owner, lease_expires_at, resumed_from_task_id, v_now AS db_now
      FROM pc_durable_tasks
     WHERE task_id BETWEEN v_first_id AND v_last_id AND state = 'running'
       AND FIND_IN_SET(attempt_token, v_tokens) > 0
     ORDER BY task_id;
  ELSE
    SELECT task_id, task_type, handler_version, payload, timeout_ms, attempt_count, attempt_token,
           attempt_owner, lease_expires_at, resumed_from_task_id, v_now AS db_now
      FROM pc_durable_tasks
     WHERE state = 'running' AND FIND_IN_SET(attempt_token, v_tokens) > 0
     ORDER BY task_id;
  END IF;
END
