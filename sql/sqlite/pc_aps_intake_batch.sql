-- Operation: pc_aps_intake_batch   (include-only: the one body of pc_aps_mark_dirty_batch and pc_aps_accept_request_batch; MySQL twin: procedures/oceanbase/pc_aps_intake_batch.sql)
-- Purpose: the batched intake of one binding: for each item, in list order, the counter + 1 as
--   the single call would (pc_aps_mark_dirty: dirty_generation, pc_aps_accept_request:
--   requested_generation); new keys are registered in the order of their first item
--   (pending_sequence). Set-based: the list is parsed once into pc_aps_intake_batch_items, each
--   key is written once with the count of its items, and each item reports the generation after
--   its own step (final - count + n for the key's n-th item).
-- Transaction: runs INSIDE the caller's transaction (inputs and their marks or requests commit
--   together); the including script runs in BEGIN IMMEDIATE ... COMMIT when called on its own.
--   The work rows (pc_aps_intake_batch_items, pc_aps_intake_batch_counter, migrations 0012 and
--   0014) are emptied before the script ends.
-- Parameters:
--   :binding_name
--   :scope_ids      the scope ids concatenated, no separator
--   :scope_ends     each item's end offset into :scope_ids in UTF-8 bytes, 8 decimal digits per
--                   item, 1..1000 items (procedures/oceanbase/COMPATIBILITY.md row 111)
--   the counter     the one row of pc_aps_intake_batch_counter, 'dirty' or 'requested', written
--                   by the including script just before
-- Result: one row per item in list order, the row the single call returns for it: (binding_name,
--   scope_id, pending_sequence, dirty_generation, clean_generation, requested_generation,
--   handled_generation, last_auto_scan_generation), the intent after that item's step.
-- Errors (message):
--   invalid_argument  no counter row, empty binding, no items or more than 1000, a malformed
--                     index, an item that is empty, cut inside a character, longer than 191
--                     characters or ends with a space (as on MySQL).
--   maintenance       the deployment is in maintenance (as the single calls): the caller's
--                     transaction must roll back.
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :binding_name IS NULL OR :binding_name = '' OR :scope_ids IS NULL OR :scope_ends IS NULL
    OR length(CAST(:scope_ends AS BLOB)) NOT BETWEEN 8 AND 8000 OR length(CAST(:scope_ends AS BLOB)) % 8 <> 0
    OR :scope_ends GLOB '*[^0-9]*'
    OR (SELECT COUNT(*) FROM pc_aps_intake_batch_counter WHERE counter IN ('dirty', 'requested')) <> 1;
INSERT INTO pc_aps_signals (code)
SELECT 'maintenance'
  FROM pc_artifact_processing_runtime
 WHERE runtime_id = 1 AND maintenance = 1;
DELETE FROM pc_aps_intake_batch_items;
-- One cut per item: byte offsets into the UTF-8 text (substr of a BLOB counts bytes).
INSERT INTO pc_aps_intake_batch_items (ord, scope_id)
SELECT x.n, CAST(substr(CAST(:scope_ids AS BLOB), x.s + 1, x.e - x.s) AS TEXT)
  FROM (SELECT o.n,
               CAST(substr(CAST('00000000' || :scope_ends AS BLOB), o.n * 8 - 7, 8) AS INTEGER) AS s,
               CAST(substr(CAST('00000000' || :scope_ends AS BLOB), o.n * 8 + 1, 8) AS INTEGER) AS e
          FROM pc_aps_batch_ordinals o
         WHERE o.n <= length(CAST(:scope_ends AS BLOB)) / 8) x
 WHERE x.e > x.s
   AND hex(substr(CAST(:scope_ids AS BLOB), x.s + 1, 1)) NOT BETWEEN '80' AND 'BF';
-- Every item kept (non-empty, starting on a character), the last end the text's length, at most
-- 191 characters, no trailing space.
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE (SELECT COUNT(*) FROM pc_aps_intake_batch_items) <> length(CAST(:scope_ends AS BLOB)) / 8
    OR CAST(substr(CAST(:scope_ends AS BLOB), -8, 8) AS INTEGER) <> length(CAST(:scope_ids AS BLOB))
    OR EXISTS (SELECT 1 FROM pc_aps_intake_batch_items WHERE length(scope_id) > 191 OR substr(scope_id, -1) = ' ');
-- Existing keys: one write per key, + the number of its items, on the batch's counter.
UPDATE pc_artifact_processing_intents
   SET dirty_generation = dirty_generation + b.items * c.dirty,
       requested_generation = requested_generation + b.items * (1 - c.dirty),
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
  FROM (SELECT scope_id, COUNT(*) AS items FROM pc_aps_intake_batch_items GROUP BY scope_id) b,
       (SELECT counter = 'dirty' AS dirty FROM pc_aps_intake_batch_counter) c
 WHERE pc_artifact_processing_intents.binding_name = :binding_name
   AND pc_artifact_processing_intents.scope_id = b.scope_id;
-- New keys, registered in the order of their first item (as the single calls would).
INSERT INTO pc_artifact_processing_intents (binding_name, scope_id, dirty_generation, requested_generation)
SELECT :binding_name, b.scope_id, COUNT(*) * c.dirty, COUNT(*) * (1 - c.dirty)
  FROM pc_aps_intake_batch_items b,
       (SELECT counter = 'dirty' AS dirty FROM pc_aps_intake_batch_counter) c
 WHERE NOT EXISTS (SELECT 1 FROM pc_artifact_processing_intents i
                    WHERE i.binding_name = :binding_name AND i.scope_id = b.scope_id)
 GROUP BY b.scope_id
 ORDER BY MIN(b.ord);
-- The n-th of a key's m items reports the generation after its own step: final - (m - n).
SELECT i.binding_name, i.scope_id, i.pending_sequence,
       i.dirty_generation - (b.items - b.nth) * c.dirty AS dirty_generation,
       i.clean_generation,
       i.requested_generation - (b.items - b.nth) * (1 - c.dirty) AS requested_generation,
       i.handled_generation, i.last_auto_scan_generation
  FROM (SELECT ord, scope_id,
               COUNT(*) OVER (PARTITION BY scope_id) AS items,
               ROW_NUMBER() OVER (PARTITION BY scope_id ORDER BY ord) AS nth
          FROM pc_aps_intake_batch_items) b
  JOIN pc_artifact_processing_intents i ON i.binding_name = :binding_name AND i.scope_id = b.scope_id,
       (SELECT counter = 'dirty' AS dirty FROM pc_aps_intake_batch_counter) c
 ORDER BY b.ord;
DELETE FROM pc_aps_intake_batch_items;
DELETE FROM pc_aps_intake_batch_counter;
