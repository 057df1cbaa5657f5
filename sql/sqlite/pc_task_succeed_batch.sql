-- Operation: pc_task_succeed_batch   (MySQL twin: procedures/oceanbase/pc_task_succeed_batch.sql; TypeScript: TaskStore.succeedBatch)
-- Purpose: the task runner commits the successes its worker processes reported (attempts
--   without ctx.onComplete writes) in ONE transaction (group commit), and claims the tasks that
--   take their places in it (sql/sqlite/pc_aps_task_claim_rows.sql, included below, after the
--   successes: the slots they freed count). Each item is decided by
--   the checks of sql/sqlite/pc_task_complete.sql, in its order: task_not_found, attempt_lost
--   (no live attempt under the token, database clock), attempt_lost (the runner's 'timeout'
--   verdict), cancel_requested; an item that passes them all is written as pc_task_complete
--   writes it. A refused item writes nothing and does not stop the others: its outcome says why.
--   (test/tasks/succeed-batch.test.ts holds every refusal against the single call.)
-- Transaction: BEGIN IMMEDIATE ... COMMIT. The lists are cut once into the work table
--   pc_task_succeed_batch_items (migration 0015), emptied again before the COMMIT.
-- Parameters (one item per attempt, the same count in every list; procedures/oceanbase/COMPATIBILITY.md row 111):
--   :task_ids            18 digits per item, 1..100 items, no id twice
--   :attempt_tokens      the attempt tokens concatenated
--   :attempt_token_ends  each token's end offset into :attempt_tokens, 8 digits per item
--   :results             the JSON results concatenated
--   :result_ends         each result's end offset in UTF-8 bytes, 8 digits per item; an empty item stores NULL
--   :worker_id, :lease_ms (1000 .. 3600000), :task_types (comma-separated, non-empty), :max_count
--                        (0 .. 100, 0 claims none): the claims, as pc_task_claim_batch takes them
-- Result: the claimed tasks as pc_task_claim_batch returns them (zero to :max_count rows); then
--   one row (outcomes): a comma-separated list in list order, per item 'succeeded' or the error
--   pc_task_complete raises for it: 'task_not_found', 'attempt_lost', 'cancel_requested'.
-- Errors (message): invalid_argument (no items or more than 100, lists of different lengths, a
--   malformed list or index, a token not 1..36 characters, an id twice, a result cut inside a
--   character; an empty worker or type list, lease or count out of range); capacity_not_set;
--   nothing is written when one is raised.
BEGIN IMMEDIATE;
DELETE FROM pc_task_succeed_batch_items;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :task_ids IS NULL OR :attempt_tokens IS NULL OR :attempt_token_ends IS NULL OR :results IS NULL OR :result_ends IS NULL
    OR length(CAST(:task_ids AS BLOB)) NOT BETWEEN 18 AND 1800 OR length(CAST(:task_ids AS BLOB)) % 18 <> 0
    OR length(CAST(:attempt_token_ends AS BLOB)) <> length(CAST(:task_ids AS BLOB)) / 18 * 8
    OR length(CAST(:result_ends AS BLOB)) <> length(CAST(:task_ids AS BLOB)) / 18 * 8
    OR (:task_ids || :attempt_token_ends || :result_ends) GLOB '*[^0-9]*'
    OR :worker_id IS NULL OR :worker_id = '' OR :lease_ms IS NULL OR :lease_ms < 1000 OR :lease_ms > 3600000
    OR :task_types IS NULL OR :task_types = '' OR :max_count IS NULL OR :max_count < 0 OR :max_count > 100;
-- One cut per item and list: byte offsets into the UTF-8 texts (substr of a BLOB counts bytes).
INSERT INTO pc_task_succeed_batch_items (ord, task_id, attempt_token, result)
SELECT x.n,
       CAST(substr(CAST(:task_ids AS BLOB), x.n * 18 - 17, 18) AS INTEGER),
       CAST(substr(CAST(:attempt_tokens AS BLOB), x.ts + 1, x.te - x.ts) AS TEXT),
       CASE WHEN x.re > x.rs THEN CAST(substr(CAST(:results AS BLOB), x.rs + 1, x.re - x.rs) AS TEXT) END
  FROM (SELECT o.n,
               CAST(substr(CAST('00000000' || :attempt_token_ends AS BLOB), o.n * 8 - 7, 8) AS INTEGER) AS ts,
               CAST(substr(CAST('00000000' || :attempt_token_ends AS BLOB), o.n * 8 + 1, 8) AS INTEGER) AS te,
               CAST(substr(CAST('00000000' || :result_ends AS BLOB), o.n * 8 - 7, 8) AS INTEGER) AS rs,
               CAST(substr(CAST('00000000' || :result_ends AS BLOB), o.n * 8 + 1, 8) AS INTEGER) AS re
          FROM pc_aps_batch_ordinals o
         WHERE o.n <= length(CAST(:task_ids AS BLOB)) / 18) x
 WHERE x.te - x.ts BETWEEN 1 AND 36 AND x.re >= x.rs
   AND hex(substr(CAST(:results AS BLOB), x.rs + 1, 1)) NOT BETWEEN '80' AND 'BF'
   AND hex(substr(CAST(:results AS BLOB), x.re + 1, 1)) NOT BETWEEN '80' AND 'BF';
-- Every item kept, every index covering its text, no task twice.
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE (SELECT COUNT(*) FROM pc_task_succeed_batch_items) <> length(CAST(:task_ids AS BLOB)) / 18
    OR CAST(substr(CAST(:attempt_token_ends AS BLOB), -8, 8) AS INTEGER) <> length(CAST(:attempt_tokens AS BLOB))
    OR CAST(substr(CAST(:result_ends AS BLOB), -8, 8) AS INTEGER) <> length(CAST(:results AS BLOB))
    OR (SELECT COUNT(DISTINCT task_id) FROM pc_task_succeed_batch_items) <> (SELECT COUNT(*) FROM pc_task_succeed_batch_items);
-- pc_task_complete's checks, in its order, one outcome per item.
UPDATE pc_task_succeed_batch_items
   SET outcome = CASE
         WHEN t.task_id IS NULL THEN 'task_not_found'
         WHEN NOT EXISTS (SELECT 1 FROM pc_durable_task_live_attempts l
                           WHERE l.task_id = pc_task_succeed_batch_items.task_id
                             AND l.attempt_token = pc_task_succeed_batch_items.attempt_token) THEN 'attempt_lost'
         WHEN t.stop_verdict = 'timeout' THEN 'attempt_lost'
         WHEN t.cancel_requested = 1 THEN 'cancel_requested'
         ELSE 'succeeded' END
  FROM (SELECT i.ord, d.task_id, d.stop_verdict, d.cancel_requested
          FROM pc_task_succeed_batch_items i LEFT JOIN pc_durable_tasks d ON d.task_id = i.task_id) t
 WHERE pc_task_succeed_batch_items.ord = t.ord;
UPDATE pc_durable_tasks
   SET state = 'succeeded', result = i.result, attempt_owner = NULL, lease_expires_at = NULL,
       finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'), updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
  FROM pc_task_succeed_batch_items i
 WHERE pc_durable_tasks.task_id = i.task_id AND i.outcome = 'succeeded';
-- At most one claim per success written: a refused item's attempt still holds its slot.
-- @include pc_aps_task_claim_rows max_count=min(:max_count, (SELECT COUNT(*) FROM pc_task_succeed_batch_items WHERE outcome = 'succeeded'))
SELECT (SELECT group_concat(outcome, ',') FROM (SELECT outcome FROM pc_task_succeed_batch_items ORDER BY ord)) AS outcomes;
DELETE FROM pc_task_succeed_batch_items;
COMMIT;
