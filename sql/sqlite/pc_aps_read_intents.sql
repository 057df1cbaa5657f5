-- Operation: pc_aps_read_intents   (MySQL twin: procedures/oceanbase/pc_aps_read_intents.sql; TypeScript: Store.readIntents)
-- Purpose: the start snapshots of several keys of one binding in one statement: what
--   pc_aps_read_intent returns for each. The supervisor reads the keys it dispatches in one turn
--   together.
-- Transaction: none needed (one read statement).
-- Parameters:
--   :binding_name
--   :scope_ids    comma-separated scope ids (scope ids never contain commas), 1..1000 items
-- Result: one row of comma-separated lists in the order of :scope_ids (an empty item where a key
--   was never registered): (pending_sequences, dirty_generations, clean_generations,
--   requested_generations, handled_generations, last_auto_scan_generations), and db_now.
-- Errors: none (the adapter refuses an empty list, empty items and more than 1000 items before
--   any SQL; a read-only script raises nothing).
WITH RECURSIVE items(ord, scope_id, rest) AS (
  SELECT 0, NULL, :scope_ids || ','
  UNION ALL
  SELECT ord + 1, substr(rest, 1, instr(rest, ',') - 1), substr(rest, instr(rest, ',') + 1)
    FROM items
   WHERE rest <> '' AND ord < 1000
)
SELECT group_concat(COALESCE(i.pending_sequence, ''), ',' ORDER BY k.ord) AS pending_sequences,
       group_concat(COALESCE(i.dirty_generation, ''), ',' ORDER BY k.ord) AS dirty_generations,
       group_concat(COALESCE(i.clean_generation, ''), ',' ORDER BY k.ord) AS clean_generations,
       group_concat(COALESCE(i.requested_generation, ''), ',' ORDER BY k.ord) AS requested_generations,
       group_concat(COALESCE(i.handled_generation, ''), ',' ORDER BY k.ord) AS handled_generations,
       group_concat(COALESCE(i.last_auto_scan_generation, ''), ',' ORDER BY k.ord) AS last_auto_scan_generations,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM items k
  LEFT JOIN pc_artifact_processing_intents i ON i.binding_name = :binding_name AND i.scope_id = k.scope_id
 WHERE k.ord > 0;
