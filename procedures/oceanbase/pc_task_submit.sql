-- Operation: pc_task_submit   (SQLite twin: sql/sqlite/pc_task_submit.sql; TypeScript: TaskStore.submit)
-- Purpose: persist the execution intent of a durable task (state 'pending'). The row is
--   claimable as soon as the caller's transaction commits; a wake-up is only a hint. At most one
--   active (pending/running) task per dedupe key: an active task with the same key is returned
--   instead (outcome 'duplicate'); the UNIQUE index on active_dedupe_key enforces it under races.
--   The active task is looked up without a row lock: a lock held until the caller commits would
--   stall that task's running attempt (heartbeat, progress) and any claim of it. A racing
--   submitter that loses on the index (error 1062) reads the winner; if that task already ended
--   in between, the insert is retried (up to 3 times).
-- Transaction: runs INSIDE the caller's transaction (a domain row and its task commit together);
--   called alone, the adapter opens one around it.
-- Parameters:
--   p_task_type             VARCHAR(128)
--   p_handler_version       INT          0 = explicit legacy version
--   p_payload               MEDIUMTEXT   JSON, validated by the handler's schema before the call
--   p_dedupe_key            VARCHAR(191) NULL for none
--   p_timeout_ms            BIGINT       > 0 (the caller caps it at the worker maximum)
--   p_resumed_from_task_id  BIGINT       NULL, or the failed task this one resumes
-- Result: one row (task_id, state, outcome 'created' | 'duplicate', dedupe_key)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  empty type, negative version, non-positive timeout, missing payload.
CREATE PROCEDURE pc_task_submit(
  IN p_task_type            VARCHAR(128),
  IN p_handler_version      INT,
  IN p_payload              MEDIUMTEXT,
  IN p_dedupe_key           VARCHAR(191),
  IN p_timeout_ms           BIGINT,
  IN p_resumed_from_task_id BIGINT
)
BEGIN
  DECLARE v_found    INT DEFAULT 1;
  DECLARE v_dup      INT DEFAULT 0;
  DECLARE v_existing BIGINT DEFAULT NULL;
  DECLARE v_task_id  BIGINT DEFAULT NULL;
  DECLARE v_now      DATETIME(3);
  DECLARE v_tries    INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE CONTINUE HANDLER FOR 1062 SET v_dup = 1;

  IF p_task_type IS NULL OR p_task_type = '' OR p_handler_version IS NULL OR p_handler_version < 0
     OR p_timeout_ms IS NULL OR p_timeout_ms <= 0 OR p_payload IS NULL THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);

  submit_loop: WHILE v_tries < 3 DO
    SET v_tries = v_tries + 1;
    SET v_existing = NULL;
    SET v_dup = 0;
    IF p_dedupe_key IS NOT NULL THEN
      SET v_found = 1;
      SELECT task_id INTO v_existing FROM pc_durable_tasks WHERE active_dedupe_key = p_dedupe_key;
    END IF;
    IF v_existing IS NOT NULL THEN
      LEAVE submit_loop;
    END IF;
    INSERT INTO pc_durable_tasks (task_type, handler_version, payload, state, dedupe_key, timeout_ms,
                                  resumed_from_task_id, created_at, updated_at)
    VALUES (p_task_type, p_handler_version, p_payload, 'pending', p_dedupe_key, p_timeout_ms,
            p_resumed_from_task_id, v_now, v_now);
    IF v_dup = 0 THEN
      SET v_task_id = LAST_INSERT_ID();
      LEAVE submit_loop;
    END IF;
    -- Lost the race on the unique index: the next round reads the winner (or retries if it ended).
  END WHILE submit_loop;

  IF v_task_id IS NOT NULL THEN
    SELECT v_task_id AS task_id, 'pending' AS state, 'created' AS outcome, p_dedupe_key AS dedupe_key;
  ELSE
    SELECT task_id, state, 'duplicate' AS outcome, dedupe_key FROM pc_durable_tasks WHERE task_id = v_existing;
  END IF;
END
