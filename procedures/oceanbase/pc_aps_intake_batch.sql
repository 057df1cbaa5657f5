-- Operation: pc_aps_intake_batch   (internal: the one body of pc_aps_mark_dirty_batch and pc_aps_accept_request_batch; SQLite twin: sql/sqlite/pc_aps_intake_batch.sql, included by theirs; no Store method)
-- Purpose: the set-based body of the batched dirty marks and requests of one binding.
--   For each item, in list order, the counter + 1 as the single call would (pc_aps_mark_dirty:
--   dirty_generation, pc_aps_accept_request: requested_generation); a key's first item registers it (pending_sequence, in the order of the
--   keys' first items). Set-based: the list is read once per statement from two text parameters
--   (COMPATIBILITY row 111), each key is written once (inserted or updated) with the count of its
--   items, and each item reports the generation after its own step (final - count + n for the
--   key's n-th item).
-- Transaction: runs INSIDE the caller's transaction like the single calls: the inputs and their
--   marks or requests commit together; an error leaves the caller to roll back the whole batch.
--   Never starts or commits a transaction.
-- Parameters:
--   p_counter      VARCHAR(16)  'dirty' (pc_aps_mark_dirty_batch) or 'requested' (pc_aps_accept_request_batch)
--   p_binding_name VARCHAR(128)
--   p_scope_ids    MEDIUMTEXT   the scope ids concatenated, no separator
--   p_scope_ends   MEDIUMTEXT   where each item ends: its end offset into p_scope_ids in UTF-8
--                               bytes, 8 decimal digits per item (item i is bytes end(i-1)+1 ..
--                               end(i), end(0) = 0), 1..1000 items
-- Result: one row per item in list order, the row the single call returns for it: (binding_name,
--   scope_id, pending_sequence, dirty_generation, clean_generation, requested_generation,
--   handled_generation, last_auto_scan_generation), the intent after that item's step.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  unknown counter, empty binding, no items or more than 1000, a malformed
--                     index (not 8 digits per item, ends not increasing, the last end not the
--                     length of p_scope_ids), an item that is not UTF-8, longer than 191
--                     characters, or ends with a space (utf8mb4_bin would equate it with the
--                     trimmed key: TypeScript refuses both).
--   maintenance       the deployment is in maintenance (as the single calls): nothing of the
--                     batch may commit; the caller's transaction must roll back.
--   SQLSTATE '40001'  three lost races in a row registering the batch's new keys: retry the
--                     transaction.
--   group_concat_max_len below 1000  the session's limit cuts the one flag per item (row 113):
--                     a configuration error (the defaults are 1024 and more).
-- Locks: the intent rows of the batch's keys (new keys in the order of their first item, then
--   existing keys in the order the list's grouping yields them), until the caller commits. No
--   gap locks. Two batches over the same keys in different orders can deadlock (ER 1213, row 81).
CREATE PROCEDURE pc_aps_intake_batch(
  IN p_counter      VARCHAR(16),
  IN p_binding_name VARCHAR(128),
  IN p_scope_ids    MEDIUMTEXT,
  IN p_scope_ends   MEDIUMTEXT
)
BEGIN
  DECLARE v_now   DATETIME(3);
  DECLARE v_ids   MEDIUMBLOB;
  DECLARE v_ends  MEDIUMBLOB;
  DECLARE v_n     INT;
  DECLARE v_bad   INT;
  DECLARE v_dup   INT DEFAULT 0;
  DECLARE v_tries INT DEFAULT 0;
  DECLARE v_dirty INT;
  DECLARE v_req   INT;
  DECLARE v_new   VARCHAR(1000);
  DECLARE CONTINUE HANDLER FOR 1062 SET v_dup = 1;

  IF p_counter IS NULL OR p_counter NOT IN ('dirty', 'requested') OR p_binding_name IS NULL OR p_binding_name = ''
     OR p_scope_ids IS NULL OR p_scope_ends IS NULL OR LENGTH(p_scope_ends) NOT BETWEEN 8 AND 8000
     OR LENGTH(p_scope_ends) MOD 8 <> 0 OR NOT (p_scope_ends REGEXP '^[0-9]+$') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  IF EXISTS (SELECT 1 FROM pc_artifact_processing_runtime WHERE runtime_id = 1 AND maintenance = 1) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'maintenance';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);
  SET v_dirty = IF(p_counter = 'dirty', 1, 0);
  SET v_req = 1 - v_dirty;
  -- Byte strings: SUBSTRING at an offset is then a cut, not a walk over the characters before it.
  SET v_ids = CAST(p_scope_ids AS BINARY);
  SET v_ends = CAST(CONCAT('00000000', p_scope_ends) AS BINARY);
  SET v_n = LENGTH(p_scope_ends) DIV 8;

  -- Every item non-empty, UTF-8, at most 191 characters, no trailing space; the index covers the list.
  -- <=>: a server that turns invalid UTF-8 into NULL (MySQL 8.0.28+) must not let the item through.
  SELECT COUNT(*) INTO v_bad
    FROM (SELECT x.len, SUBSTRING(v_ids, x.start + 1, GREATEST(x.len, 0)) AS k
            FROM (SELECT CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED) AS start,
                         CAST(SUBSTRING(v_ends, o.n * 8 + 1, 8) AS SIGNED) - CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED) AS len
                    FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x) y
   WHERE y.len <= 0 OR RIGHT(y.k, 1) = ' ' OR NOT (CONVERT(CONVERT(y.k USING utf8mb4) USING binary) <=> y.k)
      OR CHAR_LENGTH(CONVERT(y.k USING utf8mb4)) > 191;
  IF v_bad > 0 OR CAST(SUBSTRING(v_ends, v_n * 8 + 1, 8) AS SIGNED) <> LENGTH(v_ids) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  -- Items are grouped by their bytes (hash grouping, full values): for valid UTF-8 without
  -- trailing spaces, equal bytes is equal under utf8mb4_bin. A key is typed VARCHAR(191) for the
  -- primary-key lookups (FORCE INDEX, row 113: on a fresh binding the optimizer would otherwise
  -- pick scans, each row of them a version rebuilt from the undo log).
  -- One flag per item (row 113), from a plain SELECT (a consistent read, as the single calls
  -- read; an INSERT ... SELECT that reads its own table takes shared gap locks there): '1' the
  -- first item of a new key, '0' the first item of an existing key, '-' a repeated item.
  -- New keys are inserted with the count of their items, in the order of their first item
  -- (pending_sequence); existing keys are never inserted, so they consume no AUTO_INCREMENT value
  -- (row 4). A plain INSERT, not ON DUPLICATE KEY UPDATE (whose duplicate check takes gap locks
  -- even under READ COMMITTED): a key another transaction registers meanwhile raises 1062, the
  -- statement is undone and the flags are read again (that key is then an existing one).
  SET v_dup = 1;
  WHILE v_dup = 1 DO
    IF v_tries = 3 THEN
      SIGNAL SQLSTATE '40001' SET MESSAGE_TEXT = 'key registration race lost three times; retry';
    END IF;
    SET v_tries = v_tries + 1;
    SET v_dup = 0;
    SELECT GROUP_CONCAT(IF(y.nth > 1, '-',
                           IF(EXISTS (SELECT 1 FROM pc_artifact_processing_intents i FORCE INDEX (PRIMARY)
                                       WHERE i.binding_name = p_binding_name AND i.scope_id = y.scope_id), '0', '1'))
                        ORDER BY y.ord SEPARATOR '')
      INTO v_new
      FROM (SELECT x.ord, CAST(CONVERT(x.k USING utf8mb4) AS CHAR(191) CHARACTER SET utf8mb4) COLLATE utf8mb4_bin AS scope_id,
                   ROW_NUMBER() OVER (PARTITION BY x.k ORDER BY x.ord) AS nth
              FROM (SELECT o.n AS ord,
                         SUBSTRING(v_ids, CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED) + 1,
                                   CAST(SUBSTRING(v_ends, o.n * 8 + 1, 8) AS SIGNED) - CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED)) AS k
                    FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x) y;
    IF CHAR_LENGTH(v_new) <> v_n THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'group_concat_max_len below 1000';
    END IF;
    IF LOCATE('1', v_new) > 0 THEN
      INSERT INTO pc_artifact_processing_intents
             (binding_name, scope_id, dirty_generation, requested_generation, created_at, updated_at)
      SELECT p_binding_name, CAST(CONVERT(y.k USING utf8mb4) AS CHAR(191) CHARACTER SET utf8mb4) COLLATE utf8mb4_bin, y.items * v_dirty, y.items * v_req, v_now, v_now
        FROM (SELECT x.ord, x.k, COUNT(*) OVER (PARTITION BY x.k) AS items
                FROM (SELECT o.n AS ord,
                         SUBSTRING(v_ids, CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED) + 1,
                                   CAST(SUBSTRING(v_ends, o.n * 8 + 1, 8) AS SIGNED) - CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED)) AS k
                    FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x) y
       WHERE SUBSTRING(v_new, y.ord, 1) = '1'
       ORDER BY y.ord;
    END IF;
  END WHILE;

  -- Existing keys: one write each, + the number of its items. The list drives the join
  -- (STRAIGHT_JOIN): a multi-table UPDATE reads with locks and without the semi-consistent read
  -- of a single-table one, so scanning the binding instead would wait on other transactions'
  -- uncommitted keys.
  IF LOCATE('0', v_new) > 0 THEN
    UPDATE (SELECT CAST(CONVERT(g.k USING utf8mb4) AS CHAR(191) CHARACTER SET utf8mb4) COLLATE utf8mb4_bin AS scope_id, g.items
              FROM (SELECT x.k, COUNT(*) AS items, MIN(x.ord) AS first_ord
                      FROM (SELECT o.n AS ord,
                         SUBSTRING(v_ids, CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED) + 1,
                                   CAST(SUBSTRING(v_ends, o.n * 8 + 1, 8) AS SIGNED) - CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED)) AS k
                    FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x
                     GROUP BY x.k) g
             WHERE SUBSTRING(v_new, g.first_ord, 1) = '0') b
      STRAIGHT_JOIN pc_artifact_processing_intents i FORCE INDEX (PRIMARY) ON i.binding_name = p_binding_name AND i.scope_id = b.scope_id
       SET i.dirty_generation = i.dirty_generation + b.items * v_dirty,
           i.requested_generation = i.requested_generation + b.items * v_req,
           i.updated_at = v_now;
  END IF;

  -- The n-th of a key's m items reports the generation after its own step: final - (m - n).
  SELECT i.binding_name, i.scope_id, i.pending_sequence,
         i.dirty_generation - (x.items - x.nth) * v_dirty AS dirty_generation,
         i.clean_generation,
         i.requested_generation - (x.items - x.nth) * v_req AS requested_generation,
         i.handled_generation, i.last_auto_scan_generation
    FROM (SELECT y.ord, CAST(CONVERT(y.k USING utf8mb4) AS CHAR(191) CHARACTER SET utf8mb4) COLLATE utf8mb4_bin AS scope_id,
                 COUNT(*) OVER (PARTITION BY y.k) AS items,
                 ROW_NUMBER() OVER (PARTITION BY y.k ORDER BY y.ord) AS nth
            FROM (SELECT o.n AS ord,
                         SUBSTRING(v_ids, CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED) + 1,
                                   CAST(SUBSTRING(v_ends, o.n * 8 + 1, 8) AS SIGNED) - CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED)) AS k
                    FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) y) x
    STRAIGHT_JOIN pc_artifact_processing_intents i FORCE INDEX (PRIMARY) ON i.binding_name = p_binding_name AND i.scope_id = x.scope_id
   ORDER BY x.ord;
END
