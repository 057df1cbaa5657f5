-- Operation: pc_task_delete   (SQLite twin: sql/sqlite/pc_task_delete.sql; TypeScript: TaskStore.delete)
-- Purpose: delete one terminal task (succeeded, failed, cancelled). Active tasks are refused:
--   cancel them first.
-- Transaction: owns its transaction.
-- Parameters: p_task_id BIGINT
-- Result: one row (task_id, deleted = 1)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, task_active.
CREATE PROCEDURE pc_task_delete(
  IN p_task_id BIGINT
)
BEGIN
  DECLARE v_found INT DEFAULT 1;
  DECLARE v_state VARCHAR(16);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  START TRANSACTION;
  SELECT state INTO v_state FROM pc_durable_tasks WHERE task_id = p_task_id FOR UPDATE;
  IF v_found = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'task_not_found';
  END IF;
  IF v_state IN ('pending', 'running') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'task_active';
  END IF;
  DELETE FROM pc_durable_tasks WHERE task_id = p_task_id;
  COMMIT;
  SELECT p_task_id AS task_id, 1 AS deleted;
END
