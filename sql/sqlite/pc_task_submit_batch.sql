-- Operation: pc_task_submit_batch   (MySQL twin: procedures/oceanbase/pc_task_submit_batch.sql; TypeScript: TaskStore.submitBatch)
-- Purpose: pc_task_submit for up to 1000 tasks in one call, with the result of the same single
--   calls in list order: each task is written 'pending' unless an active task holds its dedupe
--   key, which is returned instead (outcome 'duplicate'), including a task created by an earlier
--   item of the batch. Task ids follow the list order of the created tasks.
-- Transaction: runs INSIDE the caller's transaction (domain rows and their tasks commit
--   together); called on its own, the runner wraps it in BEGIN IMMEDIATE ... COMMIT. The lists
--   are parsed once into the work table pc_task_submit_batch_items (migration 0012), emptied
--   before the script ends (and at its start).
-- Parameters (one item per task, the same count in every list):
--   :task_types             comma-separated task types (types never contain commas)
--   :handler_versions       comma-separated versions (0 = explicit legacy)
--   :payloads               length-prefixed items: '<n>:' followed by the n characters of the JSON payload
--   :dedupe_keys            length-prefixed items as :payloads, '~' for no key
--   :timeouts_ms            comma-separated timeouts in ms (> 0)
--   :resumed_from_task_ids  comma-separated task ids, an empty item for none
-- Result: one row of comma-separated lists in input order: (task_ids, states, outcomes
--   'created' | 'duplicate').
-- Errors (message): invalid_argument (an empty list, lists of different lengths, more than 1000
--   items, a malformed item, or an item pc_task_submit refuses).
DELETE FROM pc_task_submit_batch_items;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :task_types IS NULL OR :task_types = '' OR :handler_versions IS NULL OR :payloads IS NULL
    OR :dedupe_keys IS NULL OR :timeouts_ms IS NULL OR :resumed_from_task_ids IS NULL;
-- One pass over the six lists: each step takes the first item of each and keeps the rests.
INSERT INTO pc_task_submit_batch_items (ord, task_type, handler_version, payload_len, payload, key_len, dedupe_key, timeout_ms, resumed_from_task_id)
WITH RECURSIVE items(ord, t, v, pl, p, kl, k, tm, r, rt, rv, rp, rk, rtm, rr) AS (
  SELECT 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
         :task_types || ',', :handler_versions || ',', :payloads, :dedupe_keys, :timeouts_ms || ',', :resumed_from_task_ids || ','
  UNION ALL
  SELECT ord + 1,
         substr(rt, 1, instr(rt, ',') - 1),
         substr(rv, 1, instr(rv, ',') - 1),
         substr(rp, 1, instr(rp, ':') - 1),
         substr(rp, instr(rp, ':') + 1, CAST(substr(rp, 1, instr(rp, ':') - 1) AS INTEGER)),
         CASE WHEN substr(rk, 1, 1) = '~' THEN '~' ELSE substr(rk, 1, instr(rk, ':') - 1) END,
         CASE WHEN substr(rk, 1, 1) = '~' THEN NULL ELSE substr(rk, instr(rk, ':') + 1, CAST(substr(rk, 1, instr(rk, ':') - 1) AS INTEGER)) END,
         substr(rtm, 1, instr(rtm, ',') - 1),
         substr(rr, 1, instr(rr, ',') - 1),
         substr(rt, instr(rt, ',') + 1),
         substr(rv, instr(rv, ',') + 1),
         substr(rp, instr(rp, ':') + 1 + CAST(substr(rp, 1, instr(rp, ':') - 1) AS INTEGER)),
         CASE WHEN substr(rk, 1, 1) = '~' THEN substr(rk, 2)
              ELSE substr(rk, instr(rk, ':') + 1 + CAST(substr(rk, 1, instr(rk, ':') - 1) AS INTEGER)) END,
         substr(rtm, instr(rtm, ',') + 1),
         substr(rr, instr(rr, ',') + 1)
    FROM items
   WHERE rt <> '' AND ord < 1001
)
SELECT ord, t, v, pl, p, kl, k, tm, r FROM items WHERE ord > 0;
-- Every item well-formed, every list consumed exactly (the length prefixes add up), at most 1000.
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE EXISTS (
         SELECT 1 FROM pc_task_submit_batch_items
          WHERE task_type = '' OR ord > 1000
             OR handler_version = '' OR handler_version GLOB '*[^0-9]*' OR length(handler_version) > 9
             OR timeout_ms = '' OR timeout_ms GLOB '*[^0-9]*' OR length(timeout_ms) > 18 OR CAST(timeout_ms AS INTEGER) <= 0
             OR resumed_from_task_id GLOB '*[^0-9]*' OR length(resumed_from_task_id) > 18
             OR payload_len = '' OR payload_len GLOB '*[^0-9]*' OR length(payload_len) > 9 OR length(payload) <> CAST(payload_len AS INTEGER)
             OR (key_len <> '~' AND (key_len = '' OR key_len GLOB '*[^0-9]*' OR length(key_len) > 3
                                     OR CAST(key_len AS INTEGER) NOT BETWEEN 1 AND 191 OR length(dedupe_key) <> CAST(key_len AS INTEGER))))
    OR (SELECT COUNT(*) FROM pc_task_submit_batch_items) <> length(:handler_versions) - length(replace(:handler_versions, ',', '')) + 1
    OR (SELECT COUNT(*) FROM pc_task_submit_batch_items) <> length(:timeouts_ms) - length(replace(:timeouts_ms, ',', '')) + 1
    OR (SELECT COUNT(*) FROM pc_task_submit_batch_items) <> length(:resumed_from_task_ids) - length(replace(:resumed_from_task_ids, ',', '')) + 1
    OR (SELECT COALESCE(SUM(length(payload_len) + 1 + length(payload)), 0) FROM pc_task_submit_batch_items) <> length(:payloads)
    OR (SELECT COALESCE(SUM(CASE WHEN key_len = '~' THEN 1 ELSE length(key_len) + 1 + length(dedupe_key) END), 0)
          FROM pc_task_submit_batch_items) <> length(:dedupe_keys);
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
SELECT group_concat(b.task_id, ',' ORDER BY b.ord) AS task_ids,
       group_concat(t.state, ',' ORDER BY b.ord) AS states,
       group_concat(b.outcome, ',' ORDER BY b.ord) AS outcomes
  FROM pc_task_submit_batch_items b
  JOIN pc_durable_tasks t ON t.task_id = b.task_id;
DELETE FROM pc_task_submit_batch_items;
