-- Operation: pc_task_publish_readiness   (SQLite twin: sql/sqlite/pc_task_publish_readiness.sql; TypeScript: TaskStore.publishReadiness)
-- Purpose: a task worker publishes a readiness fact with a short TTL (database clock), so a
--   health check can tell whether any worker is alive. Also deletes at most 100 facts that
--   expired more than an hour ago (workers that vanished without withdrawing), so the table does
--   not grow with every process start.
-- Transaction: owns its transaction.
-- Parameters: p_worker_id VARCHAR(128), p_ttl_ms INT (1000 .. 600000)
-- Result: one row (worker_id, expires_at)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): invalid_argument.
CREATE PROCEDURE pc_task_publish_readiness(
  IN p_worker_id VARCHAR(128),
  IN p_ttl_ms    INT
)
BEGIN
  DECLARE v_now DATETIME(3);
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
  DELETE FROM pc_durable_task_workers WHERE expires_at < DATE_SUB(v_now, INTERVAL 1 HOUR) LIMIT 100;
  COMMIT;
  SELECT worker_id, expires_at FROM pc_durable_task_workers WHERE worker_id = p_worker_id;
END
