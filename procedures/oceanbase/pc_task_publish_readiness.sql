-- Operation: pc_task_publish_readiness   (SQLite twin: sql/sqlite/pc_task_publish_readiness.sql; TypeScript: TaskStore.publishReadiness)
-- Purpose: a task worker publishes a readiness fact with a short TTL (database clock), so a
--   health check can tell whether any worker is alive. Also deletes at most 100 facts that
--   expired more than an hour ago (workers that vanished without withdrawing), so the table does
--   not grow with every process start.
--   Deadlock-free by construction: no statement here runs in a transaction holding more than one
--   row lock. The upsert is a transaction of its own on the worker's own row; after its COMMIT
--   the cleanup finds one expired fact with a consistent (non-locking) read, then deletes it by
--   primary key with the expiry re-checked, each an autocommit statement (one row lock). Before, one transaction upserted its row
--   and then ran a DELETE that scanned (and locked, one by one) every other worker's row: two
--   idle publishers waited on each other's upserted row (ER 1213 on MariaDB 10.11).
-- Transaction: owns its transaction (the upsert); the cleanup statements autocommit after it.
-- Parameters: p_worker_id VARCHAR(128), p_ttl_ms INT (1000 .. 600000)
-- Result: one row (worker_id, expires_at)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): invalid_argument.
CREATE PROCEDURE pc_task_publish_readiness(
  IN p_worker_id VARCHAR(128),
  IN p_ttl_ms    INT
)
BEGIN
  DECLARE v_now   DATETIME(3);
  DECLARE v_found INT DEFAULT 1;
  DECLARE v_stale VARCHAR(128);
  DECLARE v_left  INT DEFAULT 100;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  IF p_worker_id IS NULL OR p_worker_id = '' OR p_ttl_ms IS NULL OR p_ttl_ms < 1000 OR p_ttl_ms > 600000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  START TRANSACTION;
  SET v_now = UTC_TIMESTAMP(3);
  INSERT INTO pc_durable_task_workers (worker_id, published_at, expires_at)
  VALUES (p_worker_id, v_now, DATE_ADD(v_now, INTERVAL p_ttl_ms * 1000 MICROSECOND))
  ON DUPLICATE KEY UPDATE published_at = v_now, expires_at = DATE_ADD(v_now, INTERVAL p_ttl_ms * 1000 MICROSECOND);
  COMMIT;
  cleanup: WHILE v_left > 0 DO
    SET v_found = 1;
    SELECT worker_id INTO v_stale FROM pc_durable_task_workers
     WHERE expires_at < DATE_SUB(v_now, INTERVAL 1 HOUR) ORDER BY expires_at LIMIT 1;
    IF v_found = 0 THEN
      LEAVE cleanup;
    END IF;
    DELETE FROM pc_durable_task_workers WHERE worker_id = v_stale AND expires_at < DATE_SUB(v_now, INTERVAL 1 HOUR);
    SET v_left = v_left - 1;
  END WHILE cleanup;
  SELECT worker_id, expires_at FROM pc_durable_task_workers WHERE worker_id = p_worker_id;
END
