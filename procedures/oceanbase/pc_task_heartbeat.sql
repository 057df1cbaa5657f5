-- Operation: pc_task_heartbeat   (SQLite twin: sql/sqlite/pc_task_heartbeat.sql; TypeScript: TaskStore.heartbeat)
-- Purpose: the current attempt extends its lease (database clock) and learns whether a cancel was
--   requested (a control point of the handler).
-- Transaction: owns its transaction.
-- Parameters:
--   p_task_id BIGINT, p_attempt_token CHAR(36), p_lease_ms INT (1000 .. 3600000)
-- Result: one row (task_id, lease_expires_at, cancel_requested, db_now)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost, invalid_argument.
CREATE PROCEDURE pc_task_heartbeat(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36),
  IN p_lease_ms      INT
)
BEGIN
  DECLARE v_now DATETIME(3);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  IF p_lease_ms IS NULL OR p_lease_ms < 1000 OR p_lease_ms > 3600000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  START TRANSACTION;
  CALL pc_task_assert_attempt(p_task_id, p_attempt_token);
  SET v_now = UTC_TIMESTAMP(3);
  UPDATE pc_durable_tasks
     SET heartbeat_at = v_now, lease_expires_at = DATE_ADD(v_now, INTERVAL p_lease_ms * 1000 MICROSECOND), updated_at = v_now
   WHERE task_id = p_task_id;
  COMMIT;
  SELECT task_id, lease_expires_at, cancel_requested, v_now AS db_now FROM pc_durable_tasks WHERE task_id = p_task_id;
END
