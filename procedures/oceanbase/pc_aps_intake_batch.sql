-- Operation: pc_aps_intake_batch   (internal: the one body of pc_aps_mark_dirty_batch and pc_aps_accept_request_batch; no Store method, no SQLite twin)
-- Purpose: the batched intake of one binding: for each item, in list order, the counter + 1 as
--   the single call would (pc_aps_mark_dirty: dirty_generation, pc_aps_accept_request:
--   requested_generation); a key's first item registers it (pending_sequence, in the order of the
--   keys' first items). Set-based: the list is read once per statement from two text parameters
--   (COMPATIBILITY row 111), each key is written once with the count of its items, and each item
--   reports the generation after its own step (final - count + n for the key's n-th item).
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
-- Locks: the intent rows of the batch's keys (existing keys in the order the join reaches them,
--   new keys in the order of their first item), until the caller commits.
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
  DECLARE v_keys  INT;
  DECLARE v_dirty INT;
  DECLARE v_req   INT;

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

  -- Every item non-empty, UTF-8, at most 191 characters, no trailing space; the index covers the
  -- list. And the number of distinct keys, to skip the insert when every key exists.
  SELECT SUM(y.len <= 0 OR RIGHT(y.k, 1) = ' ' OR CONVERT(CONVERT(y.k USING utf8mb4) USING binary) <> y.k
             OR CHAR_LENGTH(CONVERT(y.k USING utf8mb4)) > 191),
         COUNT(DISTINCT y.k)
    INTO v_bad, v_keys
    FROM (SELECT x.len, SUBSTRING(v_ids, x.start + 1, GREATEST(x.len, 0)) AS k
            FROM (SELECT CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED) AS start,
                         CAST(SUBSTRING(v_ends, o.n * 8 + 1, 8) AS SIGNED) - CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED) AS len
                    FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x) y;
  IF v_bad > 0 OR CAST(SUBSTRING(v_ends, v_n * 8 + 1, 8) AS SIGNED) <> LENGTH(v_ids) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  -- Existing keys: one write per key, + the number of its items. Items are grouped by their bytes
  -- (hash grouping, full values): for valid UTF-8 without trailing spaces, equal bytes is equal
  -- under utf8mb4_bin. The key is typed VARCHAR(191) for the primary-key join.
  UPDATE pc_artifact_processing_intents i
    JOIN (SELECT CAST(CONVERT(g.k USING utf8mb4) AS CHAR(191) CHARACTER SET utf8mb4) COLLATE utf8mb4_bin AS scope_id, g.items
            FROM (SELECT x.k, COUNT(*) AS items
                    FROM (SELECT SUBSTRING(v_ids, CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED) + 1,
                                           CAST(SUBSTRING(v_ends, o.n * 8 + 1, 8) AS SIGNED) - CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED)) AS k
                            FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x
                   GROUP BY x.k) g) b
      ON i.binding_name = p_binding_name AND i.scope_id = b.scope_id
     SET i.dirty_generation = i.dirty_generation + b.items * v_dirty,
         i.requested_generation = i.requested_generation + b.items * v_req,
         i.updated_at = v_now;

  -- New keys, in the order of their first item (pending_sequence). Existing keys are filtered out
  -- first, so they consume no AUTO_INCREMENT value (row 4); a key a concurrent transaction
  -- registers in between falls into the duplicate-key branch and becomes an ordinary increment.
  -- ROW_COUNT() is the server's count of the rows the UPDATE changed (each matched row changes).
  IF ROW_COUNT() < v_keys THEN
    INSERT INTO pc_artifact_processing_intents
           (binding_name, scope_id, dirty_generation, requested_generation, created_at, updated_at)
    SELECT p_binding_name, b.scope_id, b.items * v_dirty, b.items * v_req, v_now, v_now
      FROM (SELECT CAST(CONVERT(g.k USING utf8mb4) AS CHAR(191) CHARACTER SET utf8mb4) COLLATE utf8mb4_bin AS scope_id, g.items, g.first_ord
              FROM (SELECT x.k, COUNT(*) AS items, MIN(x.ord) AS first_ord
                      FROM (SELECT o.n AS ord,
                                   SUBSTRING(v_ids, CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED) + 1,
                                             CAST(SUBSTRING(v_ends, o.n * 8 + 1, 8) AS SIGNED) - CAST(SUBSTRING(v_ends, o.n * 8 - 7, 8) AS SIGNED)) AS k
                              FROM pc_aps_batch_ordinals o WHERE o.n <= v_n) x
                     GROUP BY x.k) g) b
     WHERE NOT EXISTS (SELECT 1 FROM pc_artifact_processing_intents i WHERE i.binding_name = p_binding_name AND i.scope_id = b.scope_id)
     ORDER BY b.first_ord
    ON DUPLICATE KEY UPDATE dirty_generation = dirty_generation + b.items * v_dirty,
                            requested_generation = requested_generation + b.items * v_req,
                            updated_at = v_now;
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
    JOIN pc_artifact_processing_intents i ON i.binding_name = p_binding_name AND i.scope_id = x.scope_id
   ORDER BY x.ord;
END
