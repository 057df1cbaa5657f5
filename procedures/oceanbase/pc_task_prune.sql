-- Operation: pc_task_prune   (SQLite twin: sql/sqlite/pc_task_prune.sql; TypeScript: TaskStore.prune)
-- Purpose: delete up to p_page_limit terminal tasks that finished before p_finished_before (oldest
--   first). Active tasks are never touched.
-- Transaction: owns its transaction.
-- Parameters: p_finished_before DATETIME(3) (UTC), p_page_limit INT (1 .. 10000)
-- Result: one row (deleted): how many were deleted (informational).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): invalid_argument.
CREATE PROCEDURE pc_task_prune(
  IN p_finished_before DATETIME(3),
  IN p_page_limit           INT
)
BEGIN
  DECLARE v_deleted INT DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  IF p_finished_before IS NULL OR p_page_limit IS NULL OR p_page_limit < 1 OR p_page_limit > 10000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  START TRANSACTION;
  DELETE FROM pc_durable_tasks
   WHERE state IN ('succeeded', 'failed', 'cancelled') AND finished_at < p_finished_before
   ORDER BY task_id
   LIMIT p_page_limit;
  SET v_deleted = ROW_COUNT();
  COMMIT;
  SELECT v_deleted AS deleted;
END
