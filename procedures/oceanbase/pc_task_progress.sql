-- Operation: pc_task_progress   (SQLite twin: sql/sqlite/pc_task_progress.sql; TypeScript: TaskStore.progress)
-- Purpose: fenced progress report of the current attempt, throttled by numeric increments: the
--   numbers are written only when they advanced by at least p_min_step since the persisted value
--   (or reached the total), but a new message is always persisted. Also a control point: returns
--   cancel_requested.
-- Transaction: owns its transaction.
-- Parameters:
--   p_task_id BIGINT, p_attempt_token CHAR(36)
--   p_current DOUBLE NULL, p_total DOUBLE NULL, p_message VARCHAR(1024) NULL
--   p_min_step DOUBLE >= 0  the numeric throttle
-- Result: one row (task_id, persisted 0/1, progress_current, progress_total, progress_message, cancel_requested)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): task_not_found, attempt_lost, invalid_argument.
CREATE PROCEDURE pc_task_progress(
  IN p_task_id       BIGINT,
  IN p_attempt_token CHAR(36),
  IN p_current       DOUBLE,
  IN p_total         DOUBLE,
  IN p_message       VARCHAR(1024),
  IN p_min_step      DOUBLE
)
BEGIN
  DECLARE v_current DOUBLE;
  DECLARE v_message VARCHAR(1024);
  DECLARE v_persist INT DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  IF p_min_step IS NULL OR p_min_step < 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  START TRANSACTION;
  CALL pc_task_assert_attempt(p_task_id, p_attempt_token);
  SELECT progress_current, progress_message INTO v_current, v_message FROM pc_durable_tasks WHERE task_id = p_task_id;
  IF p_message IS NOT NULL AND (v_message IS NULL OR v_message <> p_message) THEN
    SET v_persist = 1;
  END IF;
  IF p_current IS NOT NULL AND (v_current IS NULL OR p_current - v_current >= p_min_step
                                OR (p_total IS NOT NULL AND p_current >= p_total AND p_current <> v_current)) THEN
    SET v_persist = 1;
  END IF;
  IF v_persist = 1 THEN
    UPDATE pc_durable_tasks
       SET progress_current = COALESCE(p_current, progress_current),
           progress_total = COALESCE(p_total, progress_total),
           progress_message = COALESCE(p_message, progress_message),
           updated_at = UTC_TIMESTAMP(3)
     WHERE task_id = p_task_id;
  END IF;
  COMMIT;
  SELECT task_id, v_persist AS persisted, progress_current, progress_total, progress_message, cancel_requested
    FROM pc_durable_tasks WHERE task_id = p_task_id;
END
