-- Operation: pc_task_set_capacity   (SQLite twin: sql/sqlite/pc_task_set_capacity.sql; TypeScript: TaskStore.setCapacity)
-- Purpose: the operator changes the database claim cap of durable tasks (ADR T6; 4 after
--   `migrate up`): the most tasks running at once across every process (`apsup tasks
--   set-capacity <n>`). Taken under the same row lock as every claim, so a claim sees either the
--   old or the new cap. Lowering it below the running count stops claims until enough tasks end;
--   no running task is interrupted. Since migration 0028 it also recounts the row's running
--   count under that lock (exact: a move into or out of 'running' not yet committed holds the
--   same lock, or has not counted itself yet), which repairs a count a DBA changed by hand.
-- Locks: the 'claims' row of pc_durable_task_control (FOR UPDATE).
-- Transaction: owns its transaction.
-- Parameters:
--   p_capacity  INT  the new cap, 1 .. 10000
-- Result: one row (previous_capacity, capacity, running)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  capacity missing or out of range.
--   capacity_not_set  no 'claims' row (a database not migrated to 0017).
CREATE PROCEDURE pc_task_set_capacity(
  IN p_capacity INT
)
BEGIN
  DECLARE v_found    INT DEFAULT 1;
  DECLARE v_previous INT DEFAULT NULL;
  DECLARE v_running  INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_capacity IS NULL OR p_capacity < 1 OR p_capacity > 10000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  SELECT capacity INTO v_previous FROM pc_durable_task_control WHERE name = 'claims' FOR UPDATE;
  IF v_found = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'capacity_not_set';
  END IF;
  SELECT COUNT(*) INTO v_running FROM pc_durable_tasks WHERE state = 'running';
  UPDATE pc_durable_task_control SET capacity = p_capacity, running = v_running, updated_at = UTC_TIMESTAMP(3)
   WHERE name = 'claims';
  COMMIT;

  SELECT v_previous AS previous_capacity, p_capacity AS capacity, v_running AS running;
END
