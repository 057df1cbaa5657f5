-- Operation: pc_task_submit_batch   (MySQL twin: procedures/oceanbase/pc_task_submit_batch.sql; TypeScript: TaskStore.submitBatch)
-- Purpose: pc_task_submit for up to 1000 tasks in one call, with the result of the same single
--   calls in list order: each task is written 'pending' unless an active task holds its dedupe
--   key, which is returned instead (outcome 'duplicate'), including a task created by an earlier
--   item of the batch. Task ids follow the list order of the created tasks.
-- Transaction: runs INSIDE the caller's transaction (domain rows and their tasks commit
--   together); called on its own, the runner wraps it in BEGIN IMMEDIATE ... COMMIT. The lists
--   are cut once into the work table pc_task_submit_batch_items (migration 0012; payload_len and
--   key_len stay empty since 0014), emptied before the script ends (and at its start).
-- Parameters (one item per task, the same count in every list; procedures/oceanbase/COMPATIBILITY.md row 111):
--   :task_types             the task types concatenated, no separator
--   :task_type_ends         each type's end offset into :task_types in UTF-8 bytes, 8 digits per item
--   :handler_versions       10 digits per item (0 = explicit legacy version)
--   :payloads               the JSON payloads concatenated
--   :payload_ends           each payload's end offset into :payloads in UTF-8 bytes, 8 digits per item
--   :dedupe_keys            the dedupe keys concatenated
--   :dedupe_key_ends        each key's end offset, 8 digits per item; an empty item is no key
--   :timeouts_ms            18 digits per item, > 0
--   :resumed_from_task_ids  18 digits per item, all zeros for none
-- Result: one row per item in list order, the row pc_task_submit returns for it: (task_id, state,
--   outcome 'created' | 'duplicate', dedupe_key).
-- Errors (message): invalid_argument (no items or more than 1000, lists of different lengths, a
--   malformed list or index, an item cut inside a character, or an item pc_task_submit refuses:
--   empty type, version above the INT range, non-positive timeout; a type longer than 128 or a
--   key longer than 191 characters).
DELETE FROM pc_task_submit_batch_items;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :task_types IS NULL OR :task_type_ends IS NULL OR :handler_versions IS NULL OR :payloads IS NULL
    OR :payload_ends IS NULL OR :dedupe_keys IS NULL OR :dedupe_key_ends IS NULL OR :timeouts_ms IS NULL
    OR :resumed_from_task_ids IS NULL
    OR length(CAST(:task_type_ends AS BLOB)) NOT BETWEEN 8 AND 8000 OR length(CAST(:task_type_ends AS BLOB)) % 8 <> 0
    OR length(CAST(:payload_ends AS BLOB)) <> length(CAST(:task_type_ends AS BLOB))
    OR length(CAST(:dedupe_key_ends AS BLOB)) <> length(CAST(:task_type_ends AS BLOB))
    OR length(CAST(:handler_versions AS BLOB)) <> length(CAST(:task_type_ends AS BLOB)) / 8 * 10
    OR length(CAST(:timeouts_ms AS BLOB)) <> length(CAST(:task_type_ends AS BLOB)) / 8 * 18
    OR length(CAST(:resumed_from_task_ids AS BLOB)) <> length(CAST(:task_type_ends AS BLOB)) / 8 * 18
    OR (:task_type_ends || :payload_ends || :dedupe_key_ends || :handler_versions || :timeouts_ms || :resumed_from_task_ids) GLOB '*[^0-9]*';
-- One cut per item and list: byte offsets into the UTF-8 texts (substr of a BLOB counts bytes).
INSERT INTO pc_task_submit_batch_items (ord, task_type, handler_version, payload, dedupe_key, timeout_ms, resumed_from_task_id)
SELECT x.n,
       CAST(substr(CAST(:task_types AS BLOB), x.ts + 1, x.te - x.ts) AS TEXT),
       CAST(substr(CAST(:handler_versions AS BLOB), x.n * 10 - 9, 10) AS INTEGER),
       CAST(substr(CAST(:payloads AS BLOB), x.ps + 1, x.pe - x.ps) AS TEXT),
       CASE WHEN x.ke > x.ks THEN CAST(substr(CAST(:dedupe_keys AS BLOB), x.ks + 1, x.ke - x.ks) AS TEXT) END,
       CAST(substr(CAST(:timeouts_ms AS BLOB), x.n * 18 - 17, 18) AS INTEGER),
       NULLIF(CAST(substr(CAST(:resumed_from_task_ids AS BLOB), x.n * 18 - 17, 18) AS INTEGER), 0)
  FROM (SELECT o.n,
               CAST(substr(CAST('00000000' || :task_type_ends AS BLOB), o.n * 8 - 7, 8) AS INTEGER) AS ts,
               CAST(substr(CAST('00000000' || :task_type_ends AS BLOB), o.n * 8 + 1, 8) AS INTEGER) AS te,
               CAST(substr(CAST('00000000' || :payload_ends AS BLOB), o.n * 8 - 7, 8) AS INTEGER) AS ps,
               CAST(substr(CAST('00000000' || :payload_ends AS BLOB), o.n * 8 + 1, 8) AS INTEGER) AS pe,
               CAST(substr(CAST('00000000' || :dedupe_key_ends AS BLOB), o.n * 8 - 7, 8) AS INTEGER) AS ks,
               CAST(substr(CAST('00000000' || :dedupe_key_ends AS BLOB), o.n * 8 + 1, 8) AS INTEGER) AS ke
          FROM pc_aps_batch_ordinals o
         WHERE o.n <= length(CAST(:task_type_ends AS BLOB)) / 8) x
 WHERE x.te > x.ts AND x.pe >= x.ps AND x.ke >= x.ks
   AND hex(substr(CAST(:task_types AS BLOB), x.ts + 1, 1)) NOT BETWEEN '80' AND 'BF'
   AND hex(substr(CAST(:payloads AS BLOB), x.ps + 1, 1)) NOT BETWEEN '80' AND 'BF'
   AND hex(substr(CAST(:dedupe_keys AS BLOB), x.ks + 1, 1)) NOT BETWEEN '80' AND 'BF';
-- Every item kept, every index covering its text, every item one pc_task_submit accepts.
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE (SELECT COUNT(*) FROM pc_task_submit_batch_items) <> length(CAST(:task_type_ends AS BLOB)) / 8
    OR CAST(substr(CAST(:task_type_ends AS BLOB), -8, 8) AS INTEGER) <> length(CAST(:task_types AS BLOB))
    OR CAST(substr(CAST(:payload_ends AS BLOB), -8, 8) AS INTEGER) <> length(CAST(:payloads AS BLOB))
    OR CAST(substr(CAST(:dedupe_key_ends AS BLOB), -8, 8) AS INTEGER) <> length(CAST(:dedupe_keys AS BLOB))
    OR EXISTS (SELECT 1 FROM pc_task_submit_batch_items
                WHERE length(task_type) > 128 OR CAST(handler_version AS INTEGER) > 2147483647 OR CAST(timeout_ms AS INTEGER) <= 0
                   OR length(dedupe_key) > 191);
-- Dedupe in list order: an active task with the key, or an earlier item with it, makes a duplicate.
UPDATE pc_task_submit_batch_items
   SET outcome = CASE WHEN w.dedupe_key IS NOT NULL
                           AND (w.nth > 1 OR EXISTS (SELECT 1 FROM pc_durable_tasks t
                                                      WHERE t.dedupe_key = w.dedupe_key AND t.state IN ('pending', 'running')))
                      THEN 'duplicate' ELSE 'created' END
  FROM (SELECT ord, dedupe_key, ROW_NUMBER() OVER (PARTITION BY dedupe_key ORDER BY ord) AS nth
          FROM pc_task_submit_batch_items) w
 WHERE pc_task_submit_batch_items.ord = w.ord;
-- Created tasks take the next AUTOINCREMENT ids in list order (one writer holds the lock).
UPDATE pc_task_submit_batch_items
   SET task_id = c.base + c.nth
  FROM (SELECT ord,
               ROW_NUMBER() OVER (ORDER BY ord) AS nth,
               MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'pc_durable_tasks'), 0),
                   COALESCE((SELECT MAX(task_id) FROM pc_durable_tasks), 0)) AS base
          FROM pc_task_submit_batch_items WHERE outcome = 'created') c
 WHERE pc_task_submit_batch_items.ord = c.ord;
INSERT INTO pc_durable_tasks (task_id, task_type, handler_version, payload, state, dedupe_key, timeout_ms, resumed_from_task_id)
SELECT task_id, task_type, CAST(handler_version AS INTEGER), payload, 'pending', dedupe_key, CAST(timeout_ms AS INTEGER),
       CASE WHEN resumed_from_task_id = '' THEN NULL ELSE CAST(resumed_from_task_id AS INTEGER) END
  FROM pc_task_submit_batch_items
 WHERE outcome = 'created'
 ORDER BY ord;
UPDATE pc_task_submit_batch_items
   SET task_id = (SELECT t.task_id FROM pc_durable_tasks t
                   WHERE t.dedupe_key = pc_task_submit_batch_items.dedupe_key AND t.state IN ('pending', 'running'))
 WHERE outcome = 'duplicate';
SELECT b.task_id, t.state, b.outcome, t.dedupe_key
  FROM pc_task_submit_batch_items b
  JOIN pc_durable_tasks t ON t.task_id = b.task_id
 ORDER BY b.ord;
DELETE FROM pc_task_submit_batch_items;
