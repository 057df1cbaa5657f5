-- Operation: pc_aps_accept_request_batch   (MySQL twin: procedures/oceanbase/pc_aps_accept_request_batch.sql; TypeScript: Store.acceptRequestBatch)
-- Purpose: pc_aps_accept_request for up to 1000 keys of one binding in one call, with the result
--   of the same single calls in list order: each item is requested_generation + 1 (a key named
--   twice gets two requests, which the dispatcher merges), and new keys are registered in the
--   order of their first item (their pending_sequence). Needs no leadership.
-- Transaction: runs INSIDE the caller's transaction (input references and their requests
--   commit together); called on its own, the runner wraps it in BEGIN IMMEDIATE ... COMMIT. The list is
--   parsed once into the work table pc_aps_intake_batch_items (migration 0012), emptied before
--   the script ends (and at its start, should a caller have committed after a failed call).
-- Parameters:
--   :binding_name
--   :scope_ids      comma-separated scope ids (scope ids never contain commas), 1..1000 items
-- Result: one row of comma-separated lists in the order of :scope_ids, the intent after each
--   item's request: (pending_sequences, dirty_generations, clean_generations, requested_generations,
--   handled_generations, last_auto_scan_generations).
-- Errors (message):
--   invalid_argument  empty binding, empty list, an empty item, more than 1000 items.
--   maintenance       the deployment is in maintenance (as pc_aps_accept_request): the caller's
--                     transaction must roll back.
DELETE FROM pc_aps_intake_batch_items;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :binding_name IS NULL OR :binding_name = '' OR :scope_ids IS NULL OR :scope_ids = ''
    OR length(:scope_ids) - length(replace(:scope_ids, ',', '')) >= 1000;
INSERT INTO pc_aps_signals (code)
SELECT 'maintenance'
  FROM pc_artifact_processing_runtime
 WHERE runtime_id = 1 AND maintenance = 1;
-- One pass over the list: each step takes the first item and keeps the rest.
INSERT INTO pc_aps_intake_batch_items (ord, scope_id)
WITH RECURSIVE items(ord, scope_id, rest) AS (
  SELECT 0, NULL, :scope_ids || ','
  UNION ALL
  SELECT ord + 1, substr(rest, 1, instr(rest, ',') - 1), substr(rest, instr(rest, ',') + 1)
    FROM items
   WHERE rest <> '' AND ord < 1000
)
SELECT ord, scope_id FROM items WHERE ord > 0;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE EXISTS (SELECT 1 FROM pc_aps_intake_batch_items WHERE scope_id = '');
-- Existing keys: one request per item.
UPDATE pc_artifact_processing_intents
   SET requested_generation = requested_generation + b.marks,
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
  FROM (SELECT scope_id, COUNT(*) AS marks FROM pc_aps_intake_batch_items GROUP BY scope_id) b
 WHERE pc_artifact_processing_intents.binding_name = :binding_name
   AND pc_artifact_processing_intents.scope_id = b.scope_id;
-- New keys, registered in the order of their first item (as the single calls would).
INSERT INTO pc_artifact_processing_intents (binding_name, scope_id, requested_generation)
SELECT :binding_name, b.scope_id, COUNT(*)
  FROM pc_aps_intake_batch_items b
 WHERE NOT EXISTS (SELECT 1 FROM pc_artifact_processing_intents i
                    WHERE i.binding_name = :binding_name AND i.scope_id = b.scope_id)
 GROUP BY b.scope_id
 ORDER BY MIN(b.ord);
-- Item n of a key requested m times reports the generation after its own request: final - m + n.
SELECT group_concat(i.pending_sequence, ',' ORDER BY b.ord) AS pending_sequences,
       group_concat(i.dirty_generation, ',' ORDER BY b.ord) AS dirty_generations,
       group_concat(i.clean_generation, ',' ORDER BY b.ord) AS clean_generations,
       group_concat(i.requested_generation - b.marks + b.nth, ',' ORDER BY b.ord) AS requested_generations,
       group_concat(i.handled_generation, ',' ORDER BY b.ord) AS handled_generations,
       group_concat(i.last_auto_scan_generation, ',' ORDER BY b.ord) AS last_auto_scan_generations
  FROM (SELECT ord, scope_id,
               COUNT(*) OVER (PARTITION BY scope_id) AS marks,
               ROW_NUMBER() OVER (PARTITION BY scope_id ORDER BY ord) AS nth
          FROM pc_aps_intake_batch_items) b
  JOIN pc_artifact_processing_intents i ON i.binding_name = :binding_name AND i.scope_id = b.scope_id;
DELETE FROM pc_aps_intake_batch_items;
