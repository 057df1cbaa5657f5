-- Operation: pc_task_withdraw_readiness   (SQLite twin: sql/sqlite/pc_task_withdraw_readiness.sql; TypeScript: TaskStore.withdrawReadiness)
-- Purpose: a task worker that stops cleanly deletes its readiness fact, so it no longer counts as
--   alive for the rest of its TTL.
-- Transaction: owns its transaction.
-- Parameters: p_worker_id VARCHAR(128)
-- Result: one row (worker_id, withdrawn 0/1)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): invalid_argument.
CREATE PROCEDURE pc_task_withdraw_readiness(
  IN p_worker_id VARCHAR(128)
)
BEGIN
  DECLARE v_found INT DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  IF p_worker_id IS NULL OR p_worker_id = '' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  START TRANSACTION;
  SELECT COUNT(*) INTO v_found FROM pc_durable_task_workers WHERE worker_id = p_worker_id FOR UPDATE;
  DELETE FROM pc_durable_task_workers WHERE worker_id = p_worker_id;
  COMMIT;
  SELECT p_worker_id AS worker_id, v_found AS withdrawn;
END
