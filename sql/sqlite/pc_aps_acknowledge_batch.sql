-- Operation: pc_aps_acknowledge_batch   (MySQL twin: procedures/oceanbase/pc_aps_acknowledge_batch.sql; TypeScript: Store.acknowledgeBatch)
-- Purpose: the supervisor commits the acknowledgements its workers asked for without business
--   writes (ctx.acknowledge(): NOOP, or a candidate already committed) in ONE transaction (group
--   commit): for every key exactly the semantics of pc_aps_ack_invocation (handled_generation :=
--   max(handled, claimed generation read at start), never a newer request; optionally
--   clean_generation := max(clean, the start snapshot's dirty generation), never beyond
--   dirty_generation), all fenced by one term check.
-- Transaction: BEGIN IMMEDIATE ... COMMIT. The parameters are parsed once into the work table
--   pc_aps_ack_batch_items (migration 0007), which is empty again before the COMMIT.
-- Parameters:
--   :supervisor_key, :holder_id, :supervisor_generation   the term the invocations ran under
--   :binding_name          every key of the batch belongs to this binding
--   :scope_ids             comma-separated scope ids (scope ids never contain commas), 1..1000 items
--   :claimed_generations   comma-separated requested generations read at start (>= 1), one per scope id
--   :clean_throughs        comma-separated dirty generations of the start snapshots to confirm as
--                          clean, one per scope id; an empty item leaves clean alone
-- Result: one row of comma-separated lists in the order of :scope_ids:
--   (outcomes: 'acknowledged' | 'already_handled' per key, requested_generations,
--    handled_generations, dirty_generations, clean_generations)
-- Errors (message): term_lost, intent_not_found, ack_beyond_request, clean_beyond_dirty,
--   invalid_argument (also when the three lists differ in length, are empty, hold more than 1000
--   items, or name a scope id twice); nothing is written when one is raised.
BEGIN IMMEDIATE;
DELETE FROM pc_aps_ack_batch_items;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :scope_ids IS NULL OR :scope_ids = '' OR :claimed_generations IS NULL OR :clean_throughs IS NULL
    OR length(:claimed_generations) - length(replace(:claimed_generations, ',', '')) <> length(:scope_ids) - length(replace(:scope_ids, ',', ''))
    OR length(:clean_throughs) - length(replace(:clean_throughs, ',', '')) <> length(:scope_ids) - length(replace(:scope_ids, ',', ''))
    OR length(:scope_ids) - length(replace(:scope_ids, ',', '')) >= 1000;
-- One pass over the three lists: each step takes the first item of each and keeps the rests.
INSERT INTO pc_aps_ack_batch_items (ord, scope_id, claimed, clean_through)
WITH RECURSIVE items(ord, scope_id, claimed, clean_through, rest_s, rest_g, rest_c) AS (
  SELECT 0, NULL, NULL, NULL, :scope_ids || ',', :claimed_generations || ',', :clean_throughs || ','
  UNION ALL
  SELECT ord + 1,
         substr(rest_s, 1, instr(rest_s, ',') - 1),
         substr(rest_g, 1, instr(rest_g, ',') - 1),
         substr(rest_c, 1, instr(rest_c, ',') - 1),
         substr(rest_s, instr(rest_s, ',') + 1),
         substr(rest_g, instr(rest_g, ',') + 1),
         substr(rest_c, instr(rest_c, ',') + 1)
    FROM items
   WHERE rest_s <> '' AND ord < 1000
)
SELECT ord, scope_id,
       CASE WHEN claimed GLOB '[0-9]*' AND claimed NOT GLOB '*[^0-9]*' THEN CAST(claimed AS INTEGER) END,
       CASE WHEN clean_through = '' THEN NULL
            WHEN clean_through GLOB '[0-9]*' AND clean_through NOT GLOB '*[^0-9]*' THEN CAST(clean_through AS INTEGER)
            ELSE -1 END
  FROM items
 WHERE ord > 0;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE EXISTS (SELECT 1 FROM pc_aps_ack_batch_items
                WHERE scope_id = '' OR claimed IS NULL OR claimed < 1 OR clean_through < 0)
    OR (SELECT COUNT(DISTINCT scope_id) FROM pc_aps_ack_batch_items) <> (SELECT COUNT(*) FROM pc_aps_ack_batch_items);
-- @include pc_aps_assert_term
INSERT INTO pc_aps_signals (code)
SELECT 'intent_not_found'
 WHERE EXISTS (
   SELECT 1 FROM pc_aps_ack_batch_items b
    WHERE NOT EXISTS (SELECT 1 FROM pc_artifact_processing_intents i
                       WHERE i.binding_name = :binding_name AND i.scope_id = b.scope_id));
INSERT INTO pc_aps_signals (code)
SELECT 'ack_beyond_request'
 WHERE EXISTS (
   SELECT 1 FROM pc_aps_ack_batch_items b
     JOIN pc_artifact_processing_intents i ON i.binding_name = :binding_name AND i.scope_id = b.scope_id
    WHERE b.claimed > i.requested_generation);
INSERT INTO pc_aps_signals (code)
SELECT 'clean_beyond_dirty'
 WHERE EXISTS (
   SELECT 1 FROM pc_aps_ack_batch_items b
     JOIN pc_artifact_processing_intents i ON i.binding_name = :binding_name AND i.scope_id = b.scope_id
    WHERE b.clean_through IS NOT NULL AND b.clean_through > i.dirty_generation);
-- The result is the row each key will have after the UPDATE below (same transaction, one writer).
SELECT group_concat(CASE WHEN i.handled_generation >= b.claimed THEN 'already_handled' ELSE 'acknowledged' END, ',' ORDER BY b.ord) AS outcomes,
       group_concat(i.requested_generation, ',' ORDER BY b.ord) AS requested_generations,
       group_concat(MAX(i.handled_generation, b.claimed), ',' ORDER BY b.ord) AS handled_generations,
       group_concat(i.dirty_generation, ',' ORDER BY b.ord) AS dirty_generations,
       group_concat(MAX(i.clean_generation, COALESCE(b.clean_through, i.clean_generation)), ',' ORDER BY b.ord) AS clean_generations
  FROM pc_aps_ack_batch_items b
  JOIN pc_artifact_processing_intents i ON i.binding_name = :binding_name AND i.scope_id = b.scope_id;
UPDATE pc_artifact_processing_intents
   SET handled_generation = MAX(handled_generation, b.claimed),
       clean_generation = MAX(clean_generation, COALESCE(b.clean_through, clean_generation)),
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
  FROM pc_aps_ack_batch_items b
 WHERE pc_artifact_processing_intents.binding_name = :binding_name
   AND pc_artifact_processing_intents.scope_id = b.scope_id;
DELETE FROM pc_aps_ack_batch_items;
COMMIT;
