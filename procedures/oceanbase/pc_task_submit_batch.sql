-- Operation: pc_task_submit_batch   (SQLite twin: sql/sqlite/pc_task_submit_batch.sql; TypeScript: TaskStore.submitBatch)
-- Purpose: pc_task_submit for up to 1000 tasks in one call, item by item in list order with
--   exactly its semantics: each task is written 'pending', unless an active task holds its dedupe
--   key, which is returned instead (outcome 'duplicate'); that includes a task created by an
--   earlier item of the same batch. The result equals the same single calls in the same order.
-- Transaction: runs INSIDE the caller's transaction, like pc_task_submit (domain rows and their
--   tasks commit together); an error leaves the caller to roll back every task of the batch.
--   Never starts or commits a transaction.
-- Parameters (one item per task, the same count in every list):
--   p_task_types            MEDIUMTEXT  comma-separated task types (types never contain commas)
--   p_handler_versions      MEDIUMTEXT  comma-separated versions (digits; 0 = explicit legacy)
--   p_payloads              LONGTEXT    length-prefixed items: '<n>:' followed by the n characters
--                                       of the JSON payload (COMPATIBILITY row 82)
--   p_dedupe_keys           MEDIUMTEXT  length-prefixed items as p_payloads, '~' for no key
--   p_timeouts_ms           MEDIUMTEXT  comma-separated timeouts in ms (digits, > 0)
--   p_resumed_from_task_ids MEDIUMTEXT  comma-separated task ids, an empty item for none
-- Result: one row of comma-separated lists in input order: (task_ids, states, outcomes
--   'created' | 'duplicate'); a task's dedupe key is the one it was submitted with.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  an empty list, lists of different lengths, more than 1000 items, a malformed
--                     item, or an item pc_task_submit refuses (empty type, negative version,
--                     non-positive timeout, missing payload).
--   SQLSTATE '40001'  three lost races on one dedupe key in a row (as pc_task_submit, which then
--                     returns no row): retry the transaction.
CREATE PROCEDURE pc_task_submit_batch(
  IN p_task_types            MEDIUMTEXT,
  IN p_handler_versions      MEDIUMTEXT,
  IN p_payloads              LONGTEXT,
  IN p_dedupe_keys           MEDIUMTEXT,
  IN p_timeouts_ms           MEDIUMTEXT,
  IN p_resumed_from_task_ids MEDIUMTEXT
)
BEGIN
  DECLARE v_found    INT DEFAULT 1;
  DECLARE v_dup      INT DEFAULT 0;
  DECLARE v_existing BIGINT DEFAULT NULL;
  DECLARE v_task_id  BIGINT DEFAULT NULL;
  DECLARE v_state    VARCHAR(16);
  DECLARE v_now      DATETIME(3);
  DECLARE v_tries    INT;
  DECLARE v_i        INT DEFAULT 0;
  DECLARE v_pos      INT;
  DECLARE v_len_s    VARCHAR(16);
  DECLARE v_len      INT;
  DECLARE v_types    MEDIUMTEXT;
  DECLARE v_versions MEDIUMTEXT;
  DECLARE v_payloads LONGTEXT;
  DECLARE v_keys     MEDIUMTEXT;
  DECLARE v_timeouts MEDIUMTEXT;
  DECLARE v_resumes  MEDIUMTEXT;
  DECLARE v_type     VARCHAR(128);
  DECLARE v_version_s VARCHAR(32);
  DECLARE v_timeout_s VARCHAR(32);
  DECLARE v_resume_s  VARCHAR(32);
  DECLARE v_payload  MEDIUMTEXT;
  DECLARE v_key      VARCHAR(191);
  DECLARE v_ids      MEDIUMTEXT DEFAULT '';
  DECLARE v_states   MEDIUMTEXT DEFAULT '';
  DECLARE v_outcomes MEDIUMTEXT DEFAULT '';
  DECLARE v_sep      VARCHAR(1) DEFAULT '';
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE CONTINUE HANDLER FOR 1062 SET v_dup = 1;

  IF p_task_types IS NULL OR p_task_types = '' OR p_handler_versions IS NULL OR p_payloads IS NULL
     OR p_dedupe_keys IS NULL OR p_timeouts_ms IS NULL OR p_resumed_from_task_ids IS NULL THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);
  SET v_types = CONCAT(p_task_types, ',');
  SET v_versions = CONCAT(p_handler_versions, ',');
  SET v_timeouts = CONCAT(p_timeouts_ms, ',');
  SET v_resumes = CONCAT(p_resumed_from_task_ids, ',');
  SET v_payloads = p_payloads;
  SET v_keys = p_dedupe_keys;

  -- Each step cuts the first item off every list (COMPATIBILITY row 80: linear in the lists).
  WHILE v_types <> '' DO
    SET v_i = v_i + 1;
    IF v_i > 1000 OR v_versions = '' OR v_timeouts = '' OR v_resumes = '' OR v_payloads = '' OR v_keys = '' THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
    END IF;
    SET v_pos = LOCATE(',', v_types);
    SET v_type = LEFT(v_types, v_pos - 1);
    SET v_types = SUBSTRING(v_types, v_pos + 1);
    SET v_pos = LOCATE(',', v_versions);
    SET v_version_s = LEFT(v_versions, v_pos - 1);
    SET v_versions = SUBSTRING(v_versions, v_pos + 1);
    SET v_pos = LOCATE(',', v_timeouts);
    SET v_timeout_s = LEFT(v_timeouts, v_pos - 1);
    SET v_timeouts = SUBSTRING(v_timeouts, v_pos + 1);
    SET v_pos = LOCATE(',', v_resumes);
    SET v_resume_s = LEFT(v_resumes, v_pos - 1);
    SET v_resumes = SUBSTRING(v_resumes, v_pos + 1);
    -- Digits only before any CAST (row 36).
    IF v_type = '' OR NOT (v_version_s REGEXP '^[0-9]{1,9}$') OR NOT (v_timeout_s REGEXP '^[0-9]{1,18}$')
       OR NOT (v_resume_s = '' OR v_resume_s REGEXP '^[0-9]{1,18}$') THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
    END IF;

    -- Length-prefixed payload: '<n>:' and n characters (row 82).
    SET v_pos = LOCATE(':', v_payloads);
    SET v_len_s = IF(v_pos BETWEEN 2 AND 10, LEFT(v_payloads, v_pos - 1), '');
    IF NOT (v_len_s REGEXP '^[0-9]{1,9}$') THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
    END IF;
    SET v_len = CAST(v_len_s AS SIGNED);
    SET v_payload = SUBSTRING(v_payloads, v_pos + 1, v_len);
    IF CHAR_LENGTH(v_payload) <> v_len THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
    END IF;
    SET v_payloads = SUBSTRING(v_payloads, v_pos + 1 + v_len);

    IF LEFT(v_keys, 1) = '~' THEN
      SET v_key = NULL;
      SET v_keys = SUBSTRING(v_keys, 2);
    ELSE
      SET v_pos = LOCATE(':', v_keys);
      SET v_len_s = IF(v_pos BETWEEN 2 AND 4, LEFT(v_keys, v_pos - 1), '');
      IF NOT (v_len_s REGEXP '^[0-9]{1,3}$') OR CAST(v_len_s AS SIGNED) NOT BETWEEN 1 AND 191 THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
      END IF;
      SET v_len = CAST(v_len_s AS SIGNED);
      SET v_key = SUBSTRING(v_keys, v_pos + 1, v_len);
      IF CHAR_LENGTH(v_key) <> v_len THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
      END IF;
      SET v_keys = SUBSTRING(v_keys, v_pos + 1 + v_len);
    END IF;
    IF CAST(v_timeout_s AS SIGNED) <= 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
    END IF;

    -- pc_task_submit's body for this item (dedupe read without a lock, 1062 race retried).
    SET v_tries = 0;
    SET v_task_id = NULL;
    submit_loop: WHILE v_tries < 3 DO
      SET v_tries = v_tries + 1;
      SET v_existing = NULL;
      SET v_dup = 0;
      IF v_key IS NOT NULL THEN
        SET v_found = 1;
        SELECT task_id INTO v_existing FROM pc_durable_tasks WHERE active_dedupe_key = v_key;
      END IF;
      IF v_existing IS NOT NULL THEN
        LEAVE submit_loop;
      END IF;
      INSERT INTO pc_durable_tasks (task_type, handler_version, payload, state, dedupe_key, timeout_ms,
                                    resumed_from_task_id, created_at, updated_at)
      VALUES (v_type, CAST(v_version_s AS SIGNED), v_payload, 'pending', v_key, CAST(v_timeout_s AS SIGNED),
              IF(v_resume_s = '', NULL, CAST(v_resume_s AS SIGNED)), v_now, v_now);
      IF v_dup = 0 THEN
        SET v_task_id = LAST_INSERT_ID();
        LEAVE submit_loop;
      END IF;
    END WHILE submit_loop;

    IF v_task_id IS NOT NULL THEN
      SET v_ids = CONCAT(v_ids, v_sep, v_task_id);
      SET v_states = CONCAT(v_states, v_sep, 'pending');
      SET v_outcomes = CONCAT(v_outcomes, v_sep, 'created');
    ELSEIF v_existing IS NOT NULL THEN
      SET v_found = 1;
      SELECT state INTO v_state FROM pc_durable_tasks WHERE task_id = v_existing;
      SET v_ids = CONCAT(v_ids, v_sep, v_existing);
      SET v_states = CONCAT(v_states, v_sep, v_state);
      SET v_outcomes = CONCAT(v_outcomes, v_sep, 'duplicate');
    ELSE
      SIGNAL SQLSTATE '40001' SET MESSAGE_TEXT = 'dedupe key race lost three times; retry';
    END IF;
    SET v_sep = ',';
  END WHILE;
  IF v_versions <> '' OR v_timeouts <> '' OR v_resumes <> '' OR v_payloads <> '' OR v_keys <> '' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  SELECT v_ids AS task_ids, v_states AS states, v_outcomes AS outcomes;
END
