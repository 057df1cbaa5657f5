-- Operation: pc_task_submit_batch   (SQLite twin: sql/sqlite/pc_task_submit_batch.sql; TypeScript: TaskStore.submitBatch)
-- Purpose: pc_task_submit for up to 1000 tasks in one call, with the result of the same single calls in list order.
--   Each task is written 'pending', unless an active task holds its dedupe key, which is
--   returned instead (outcome 'duplicate'); that includes a task created by an earlier item of
--   the same batch. Set-based: one INSERT writes the new tasks in list order (the first item of
--   each key that no active task holds, and every item without a key); the tasks without a key
--   carry a marker in attempt_token ('#' and the item's position) until the result is read, then
--   it is cleared. When that INSERT loses a race on a dedupe key (error 1062), it is undone and
--   the batch runs item by item with pc_task_submit's statements instead.
-- Transaction: runs INSIDE the caller's transaction, like pc_task_submit (domain rows and their
--   tasks commit together); an error leaves the caller to roll back every task of the batch.
--   Never starts or commits a transaction.
-- Parameters (one item per task, the same count in every list; COMPATIBILITY row 111):
--   p_task_types            MEDIUMTEXT  the task types concatenated, no separator
--   p_task_type_ends        MEDIUMTEXT  each type's end offset into p_task_types in UTF-8 bytes, 8 digits per item
--   p_handler_versions      MEDIUMTEXT  10 digits per item (0 = explicit legacy version)
--   p_payloads              LONGTEXT    the JSON payloads concatenated
--   p_payload_ends          MEDIUMTEXT  each payload's end offset into p_payloads in UTF-8 bytes, 8 digits per item
--   p_dedupe_keys           MEDIUMTEXT  the dedupe keys concatenated
--   p_dedupe_key_ends       MEDIUMTEXT  each key's end offset, 8 digits per item; an empty item is no key
--   p_timeouts_ms           MEDIUMTEXT  18 digits per item, > 0
--   p_resumed_from_task_ids MEDIUMTEXT  18 digits per item, all zeros for none
-- Result: one row per item in list order, the row pc_task_submit returns for it: (task_id, state,
--   outcome 'created' | 'duplicate', dedupe_key).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  no items or more than 1000, lists of different lengths, a malformed list or
--                     index (ends not ascending, the last end not the text's length), an item
--                     that is not UTF-8, or an item pc_task_submit refuses (empty type, version
--                     above the INT range, non-positive timeout); a type longer than 128 or a
--                     key longer than 191 characters.
--   SQLSTATE '40001'  three lost races on one dedupe key in a row (as pc_task_submit, which then
--                     returns no row), or the active task an item was found a duplicate of ended
--                     before its id was read back: retry the transaction.
--   group_concat_max_len below 1000  the session's limit cuts the one flag per item (row 113):
--                     a configuration error (the defaults are 1024 and more).
-- Locks: the new task rows (and, after a lost race, the unique-index entry of the winner), until
--   the caller commits; existing tasks are read without a lock, as pc_task_submit reads them.
CREATE PROCEDURE pc_task_submit_batch(
  IN p_task_types            MEDIUMTEXT,
  IN p_task_type_ends        MEDIUMTEXT,
  IN p_handler_versions      MEDIUMTEXT,
  IN p_payloads              LONGTEXT,
  IN p_payload_ends          MEDIUMTEXT,
  IN p_dedupe_keys           MEDIUMTEXT,
  IN p_dedupe_key_ends       MEDIUMTEXT,
  IN p_timeouts_ms           MEDIUMTEXT,
  IN p_resumed_from_task_ids MEDIUMTEXT
)
BEGIN
  DECLARE v_dup        INT DEFAULT 0;
  DECLARE v_existing   BIGINT DEFAULT NULL;
  DECLARE v_task_id    BIGINT DEFAULT NULL;
  DECLARE v_now        DATETIME(3);
  DECLARE v_tries      INT;
  DECLARE v_n          INT;
  DECLARE v_i          INT DEFAULT 0;
  DECLARE v_bad        INT;
  DECLARE v_types      MEDIUMBLOB;
  DECLARE v_type_ends  MEDIUMBLOB;
  DECLARE v_versions   MEDIUMBLOB;
  DECLARE v_payloads   LONGBLOB;
  DECLARE v_pay_ends   MEDIUMBLOB;
  DECLARE v_keys       MEDIUMBLOB;
  DECLARE v_key_ends   MEDIUMBLOB;
  DECLARE v_timeouts   MEDIUMBLOB;
  DECLARE v_resumes    MEDIUMBLOB;
  DECLARE v_type       VARCHAR(128);
  DECLARE v_version    BIGINT;
  DECLARE v_payload    MEDIUMTEXT;
  DECLARE v_key        VARCHAR(191);
  DECLARE v_timeout    BIGINT;
  DECLARE v_resume     BIGINT;
  DECLARE v_first      BIGINT DEFAULT NULL;
  DECLARE v_lost       INT;
  DECLARE v_unkeyed    INT;
  DECLARE v_new        VARCHAR(1000);
  DECLARE v_ids        MEDIUMTEXT DEFAULT '';
  DECLARE v_outcomes   MEDIUMTEXT DEFAULT '';
  DECLARE CONTINUE HANDLER FOR 1062 SET v_dup = 1;

  IF p_task_types IS NULL OR p_task_type_ends IS NULL OR p_handler_versions IS NULL OR p_payloads IS NULL
     OR p_payload_ends IS NULL OR p_dedupe_keys IS NULL OR p_dedupe_key_ends IS NULL OR p_timeouts_ms IS NULL
     OR p_resumed_from_task_ids IS NULL
     OR LENGTH(p_task_type_ends) NOT BETWEEN 8 AND 8000 OR LENGTH(p_task_type_ends) MOD 8 <> 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SET v_n = LENGTH(p_task_type_ends) DIV 8;
  -- Every list has v_n items of its width, digits only before any CAST (row 36).
  IF LENGTH(p_payload_ends) <> v_n * 8 OR LENGTH(p_dedupe_key_ends) <> v_n * 8 OR LENGTH(p_handler_versions) <> v_n * 10
     OR LENGTH(p_timeouts_ms) <> v_n * 18 OR LENGTH(p_resumed_from_task_ids) <> v_n * 18
     OR NOT (CONCAT(p_task_type_ends, p_payload_ends, p_dedupe_key_ends, p_handler_versions, p_timeouts_ms, p_resumed_from_task_ids) REGEXP '^[0-9]+$') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);
  -- Byte strings: SUBSTRING at an offset is then a cut, not a walk over the characters before it.
  SET v_types = CAST(p_task_types AS BINARY);
  SET v_type_ends = CAST(CONCAT('00000000', p_task_type_ends) AS BINARY);
  SET v_payloads = CAST(p_payloads AS BINARY);
  SET v_pay_ends = CAST(CONCAT('00000000', p_payload_ends) AS BINARY);
  SET v_keys = CAST(p_dedupe_keys AS BINARY);
  SET v_key_ends = CAST(CONCAT('00000000', p_dedupe_key_ends) AS BINARY);
  SET v_versions = CAST(p_handler_versions AS BINARY);
  SET v_timeouts = CAST(p_timeouts_ms AS BINARY);
  SET v_resumes = CAST(p_resumed_from_task_ids AS BINARY);

  -- Every item well-formed (one pass over the lists): ends ascending and covering each text,
  -- texts UTF-8, types 1..128 and keys 0..191 characters, versions in the INT range, timeouts > 0.
  -- <=>: a server that turns invalid UTF-8 into NULL (MySQL 8.0.28+) must not let the item through
  -- (SUM skips a NULL).
  SELECT SUM(y.te <= y.ts OR y.pe < y.ps OR y.ke < y.ks
             OR y.version > 2147483647 OR y.timeout <= 0
             OR NOT (CONVERT(CONVERT(y.t USING utf8mb4) USING binary) <=> y.t) OR CHAR_LENGTH(CONVERT(y.t USING utf8mb4)) > 128
             OR NOT (CONVERT(CONVERT(y.p USING utf8mb4) USING binary) <=> y.p)
             OR NOT (CONVERT(CONVERT(y.k USING utf8mb4) USING binary) <=> y.k) OR CHAR_LENGTH(CONVERT(y.k USING utf8mb4)) > 191),
         SUM(y.ke = y.ks)
    INTO v_bad, v_unkeyed
    FROM (SELECT x.*, SUBSTRING(v_types, x.ts + 1, GREATEST(x.te - x.ts, 0)) AS t,
                 SUBSTRING(v_payloads, x.ps + 1, GREATEST(x.pe - x.ps, 0)) AS p,
                 SUBSTRING(v_keys, x.ks + 1, GREATEST(x.ke - x.ks, 0)) AS k
            FROM (SELECT o.n,
               CAST(SUBSTRING(v_type_ends, o.n * 8 - 7, 8) AS SIGNED) AS ts, CAST(SUBSTRING(v_type_ends, o.n * 8 + 1, 8) AS SIGNED) AS te,
               CAST(SUBSTRING(v_pay_ends, o.n * 8 - 7, 8) AS SIGNED) AS ps, CAST(SUBSTRING(v_pay_ends, o.n * 8 + 1, 8) AS SIGNED) AS pe,
               CAST(SUBSTRING(v_key_ends, o.n * 8 - 7, 8) AS SIGNED) AS ks, CAST(SUBSTRING(v_key_ends, o.n * 8 + 1, 8) AS SIGNED) AS ke,
               CAST(SUBSTRING(v_versions, o.n * 10 - 9, 10) AS SIGNED) AS version,
               CAST(SUBSTRING(v_timeouts, o.n * 18 - 17, 18) AS SIGNED) AS timeout
          FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x) y;
  IF v_bad > 0 OR CAST(SUBSTRING(v_type_ends, v_n * 8 + 1, 8) AS SIGNED) <> LENGTH(v_types)
     OR CAST(SUBSTRING(v_pay_ends, v_n * 8 + 1, 8) AS SIGNED) <> LENGTH(v_payloads)
     OR CAST(SUBSTRING(v_key_ends, v_n * 8 + 1, 8) AS SIGNED) <> LENGTH(v_keys) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  -- Which items write a task, one flag per item (row 113): every item without a key, and the
  -- first item of each key (grouped by bytes, window over the whole value) that no active task
  -- holds. A plain SELECT: a consistent read, as pc_task_submit reads the active task (an INSERT
  -- ... SELECT that reads its own table takes shared gap locks there).
  SELECT GROUP_CONCAT(IF(y.k IS NULL OR (y.nth = 1 AND NOT EXISTS (SELECT 1 FROM pc_durable_tasks a FORCE INDEX (uk_pc_dt_active_dedupe) WHERE a.active_dedupe_key = y.k)), '1', '0')
                      ORDER BY y.n SEPARATOR '')
    INTO v_new
    FROM (SELECT x.n, IF(x.ke > x.ks, CAST(CONVERT(SUBSTRING(v_keys, x.ks + 1, x.ke - x.ks) USING utf8mb4) AS CHAR(191) CHARACTER SET utf8mb4), NULL)
                 COLLATE utf8mb4_bin AS k,
               ROW_NUMBER() OVER (PARTITION BY SUBSTRING(v_keys, x.ks + 1, x.ke - x.ks) ORDER BY x.n) AS nth
          FROM (SELECT o.n, CAST(SUBSTRING(v_key_ends, o.n * 8 - 7, 8) AS SIGNED) AS ks,
                       CAST(SUBSTRING(v_key_ends, o.n * 8 + 1, 8) AS SIGNED) AS ke
                  FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x) y;
  IF CHAR_LENGTH(v_new) <> v_n THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'group_concat_max_len below 1000';
  END IF;

  -- One INSERT of those tasks in list order; the ones without a key carry a marker until read
  -- back. A key that becomes active meanwhile, or two items whose keys differ only by trailing
  -- spaces (equal under utf8mb4_bin), raise 1062: the statement is undone and the item-by-item
  -- path below decides instead.
  SET v_dup = 0;
  IF LOCATE('1', v_new) > 0 THEN
    INSERT INTO pc_durable_tasks (task_type, handler_version, payload, state, dedupe_key, timeout_ms,
                                  resumed_from_task_id, attempt_token, created_at, updated_at)
    SELECT CONVERT(SUBSTRING(v_types, x.ts + 1, x.te - x.ts) USING utf8mb4), x.version,
           CONVERT(SUBSTRING(v_payloads, x.ps + 1, x.pe - x.ps) USING utf8mb4), 'pending',
           IF(x.ke > x.ks, CONVERT(SUBSTRING(v_keys, x.ks + 1, x.ke - x.ks) USING utf8mb4), NULL), x.timeout, x.resume,
           IF(x.ke > x.ks, NULL, CONCAT('#', x.n)), v_now, v_now
      FROM (SELECT o.n,
                   CAST(SUBSTRING(v_type_ends, o.n * 8 - 7, 8) AS SIGNED) AS ts, CAST(SUBSTRING(v_type_ends, o.n * 8 + 1, 8) AS SIGNED) AS te,
                   CAST(SUBSTRING(v_pay_ends, o.n * 8 - 7, 8) AS SIGNED) AS ps, CAST(SUBSTRING(v_pay_ends, o.n * 8 + 1, 8) AS SIGNED) AS pe,
                   CAST(SUBSTRING(v_key_ends, o.n * 8 - 7, 8) AS SIGNED) AS ks, CAST(SUBSTRING(v_key_ends, o.n * 8 + 1, 8) AS SIGNED) AS ke,
                   CAST(SUBSTRING(v_versions, o.n * 10 - 9, 10) AS SIGNED) AS version,
                   CAST(SUBSTRING(v_timeouts, o.n * 18 - 17, 18) AS SIGNED) AS timeout,
                   NULLIF(CAST(SUBSTRING(v_resumes, o.n * 18 - 17, 18) AS SIGNED), 0) AS resume
              FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x
     WHERE SUBSTRING(v_new, x.n, 1) = '1'
     ORDER BY x.n;
    -- The ids of one statement are at least its first (AUTO_INCREMENT never goes back; row 112):
    -- the range that holds the marked rows.
    IF v_dup = 0 THEN
      SET v_first = LAST_INSERT_ID();
    END IF;
  END IF;

  IF v_dup = 0 THEN
    -- Per item, in list order: an item with a key, the active task of its key (the one this
    -- batch wrote when the item's flag is set, else the one it duplicates); an item without a
    -- key, its marked row, found from the rows (a primary-key range from this INSERT's first id,
    -- each marker's position looked up in the ordinals): a join from the items to the marked
    -- rows read every pending task once per item (row 122).
    SELECT r.task_id, r.state, r.outcome, r.dedupe_key
      FROM (SELECT z.n, a.task_id, a.state, IF(SUBSTRING(v_new, z.n, 1) = '1', 'created', 'duplicate') AS outcome, a.dedupe_key
              FROM (SELECT x.n, IF(x.ke > x.ks, CAST(CONVERT(SUBSTRING(v_keys, x.ks + 1, x.ke - x.ks) USING utf8mb4) AS CHAR(191) CHARACTER SET utf8mb4), NULL)
                             COLLATE utf8mb4_bin AS k
                      FROM (SELECT o.n, CAST(SUBSTRING(v_key_ends, o.n * 8 - 7, 8) AS SIGNED) AS ks,
                                   CAST(SUBSTRING(v_key_ends, o.n * 8 + 1, 8) AS SIGNED) AS ke
                              FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x) z
              LEFT JOIN pc_durable_tasks a FORCE INDEX (uk_pc_dt_active_dedupe) ON a.active_dedupe_key = z.k
             WHERE z.k IS NOT NULL
            UNION ALL
            SELECT o.n, m.task_id, m.state, 'created', m.dedupe_key
              FROM pc_durable_tasks m FORCE INDEX (PRIMARY)
              STRAIGHT_JOIN pc_aps_batch_ordinals o ON o.n = CAST(SUBSTRING(m.attempt_token, 2) AS SIGNED)
             WHERE m.task_id >= v_first AND m.state = 'pending' AND m.attempt_token LIKE '#%') r
     ORDER BY r.n;
    -- The markers never outlive the call (no other writer sets a token on a pending task), also
    -- not when the check below fails and a caller commits anyway.
    IF v_unkeyed > 0 AND v_first IS NOT NULL THEN
      UPDATE pc_durable_tasks SET attempt_token = NULL
       WHERE state = 'pending' AND task_id >= v_first AND attempt_token LIKE '#%';
    END IF;
    -- An item whose task was not found (the active task it duplicated ended in between) made the
    -- result above incomplete: the caller retries. Checked after the read, so it cannot miss one.
    SELECT COUNT(*) INTO v_lost
      FROM (SELECT IF(x.ke > x.ks, CAST(CONVERT(SUBSTRING(v_keys, x.ks + 1, x.ke - x.ks) USING utf8mb4) AS CHAR(191) CHARACTER SET utf8mb4), NULL)
                     COLLATE utf8mb4_bin AS k
              FROM (SELECT CAST(SUBSTRING(v_key_ends, o.n * 8 - 7, 8) AS SIGNED) AS ks, CAST(SUBSTRING(v_key_ends, o.n * 8 + 1, 8) AS SIGNED) AS ke
                      FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x) z
     WHERE z.k IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pc_durable_tasks a FORCE INDEX (uk_pc_dt_active_dedupe) WHERE a.active_dedupe_key = z.k);
    IF v_lost > 0 THEN
      SIGNAL SQLSTATE '40001' SET MESSAGE_TEXT = 'a duplicate task ended during the batch; retry';
    END IF;
  ELSE
    -- After a lost race: item by item, each cut O(1) on the byte strings, pc_task_submit's statements.
    WHILE v_i < v_n DO
      SET v_i = v_i + 1;
      SET v_type = CONVERT(SUBSTRING(v_types, CAST(SUBSTRING(v_type_ends, v_i * 8 - 7, 8) AS SIGNED) + 1,
                                     CAST(SUBSTRING(v_type_ends, v_i * 8 + 1, 8) AS SIGNED) - CAST(SUBSTRING(v_type_ends, v_i * 8 - 7, 8) AS SIGNED)) USING utf8mb4);
      SET v_payload = CONVERT(SUBSTRING(v_payloads, CAST(SUBSTRING(v_pay_ends, v_i * 8 - 7, 8) AS SIGNED) + 1,
                                        CAST(SUBSTRING(v_pay_ends, v_i * 8 + 1, 8) AS SIGNED) - CAST(SUBSTRING(v_pay_ends, v_i * 8 - 7, 8) AS SIGNED)) USING utf8mb4);
      SET v_key = NULLIF(CONVERT(SUBSTRING(v_keys, CAST(SUBSTRING(v_key_ends, v_i * 8 - 7, 8) AS SIGNED) + 1,
                                           CAST(SUBSTRING(v_key_ends, v_i * 8 + 1, 8) AS SIGNED) - CAST(SUBSTRING(v_key_ends, v_i * 8 - 7, 8) AS SIGNED)) USING utf8mb4), '');
      SET v_version = CAST(SUBSTRING(v_versions, v_i * 10 - 9, 10) AS SIGNED);
      SET v_timeout = CAST(SUBSTRING(v_timeouts, v_i * 18 - 17, 18) AS SIGNED);
      SET v_resume = NULLIF(CAST(SUBSTRING(v_resumes, v_i * 18 - 17, 18) AS SIGNED), 0);

      -- pc_task_submit's body for this item (dedupe read without a lock, 1062 race retried).
      SET v_tries = 0;
      SET v_task_id = NULL;
      submit_loop: WHILE v_tries < 3 DO
        SET v_tries = v_tries + 1;
        SET v_dup = 0;
        SET v_existing = NULL;
        IF v_key IS NOT NULL THEN
          SET v_existing = (SELECT task_id FROM pc_durable_tasks WHERE active_dedupe_key = v_key);
        END IF;
        IF v_existing IS NOT NULL THEN
          LEAVE submit_loop;
        END IF;
        INSERT INTO pc_durable_tasks (task_type, handler_version, payload, state, dedupe_key, timeout_ms,
                                      resumed_from_task_id, created_at, updated_at)
        VALUES (v_type, v_version, v_payload, 'pending', v_key, v_timeout, v_resume, v_now, v_now);
        IF v_dup = 0 THEN
          SET v_task_id = LAST_INSERT_ID();
          LEAVE submit_loop;
        END IF;
      END WHILE submit_loop;

      IF v_task_id IS NOT NULL THEN
        SET v_ids = CONCAT(v_ids, LPAD(v_task_id, 20, '0'));
        SET v_outcomes = CONCAT(v_outcomes, 'c');
      ELSEIF v_existing IS NOT NULL THEN
        SET v_ids = CONCAT(v_ids, LPAD(v_existing, 20, '0'));
        SET v_outcomes = CONCAT(v_outcomes, 'd');
      ELSE
        SIGNAL SQLSTATE '40001' SET MESSAGE_TEXT = 'dedupe key race lost three times; retry';
      END IF;
    END WHILE;

    SELECT t.task_id, t.state, IF(SUBSTRING(v_outcomes, o.n, 1) = 'c', 'created', 'duplicate') AS outcome, t.dedupe_key
      FROM pc_aps_batch_ordinals o
      JOIN pc_durable_tasks t ON t.task_id = CAST(SUBSTRING(v_ids, o.n * 20 - 19, 20) AS SIGNED)
     WHERE o.n <= v_n
     ORDER BY o.n;
  END IF;
END
