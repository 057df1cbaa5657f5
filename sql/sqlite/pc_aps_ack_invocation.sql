-- Operation: pc_aps_ack_invocation   (MySQL twin: procedures/oceanbase/pc_aps_ack_invocation.sql; TypeScript: Store.ackInvocation)
-- Purpose: a worker acknowledges its invocation inside its own business transaction, fenced by
--   its term: handled_generation := max(handled, claimed generation read at start), never a newer
--   request; optionally clean_generation := max(clean, dirty generation of the snapshot read at
--   start), never beyond dirty_generation. A request accepted during the run stays owed.
-- Transaction: runs INSIDE the caller's BEGIN IMMEDIATE transaction, with the business writes it
--   confirms; called on its own, the runner wraps it in BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :supervisor_key, :holder_id, :supervisor_generation   the worker's term
--   :binding_name, :scope_id
--   :claimed_request_generation       >= 1
--   :clean_through_dirty_generation   NULL (leave clean alone) or the snapshot's dirty generation
-- Result: one row (binding_name, scope_id, outcome 'acknowledged' | 'already_handled' (handled
--   unchanged; a clean confirmation is still applied),
--   requested_generation, handled_generation, dirty_generation, clean_generation)
-- Errors (message):
--   term_lost, intent_not_found, ack_beyond_request, clean_beyond_dirty, invalid_argument.
-- Fast path, the common case: one UPDATE whose WHERE holds every condition of the full path below
-- (valid arguments, the live term, the key, a claim beyond handled and within requested, a clean
-- confirmation within dirty). When it writes, its row is the result and the script ends there
-- (`-- @done-if-rows`, src/store/sqlite/script.ts); when it writes nothing, the full path runs and
-- names the refusal or reports 'already_handled'. Both run under the caller's write lock, so the
-- term check and the write are one step. (Run whole in the sqlite3 shell, the full path then
-- reports 'already_handled' for the key the fast path just acknowledged; the rows are the same.)
-- @done-if-rows
UPDATE pc_artifact_processing_intents
   SET handled_generation = :claimed_request_generation,
       clean_generation = CASE WHEN :clean_through_dirty_generation IS NULL THEN clean_generation
                               ELSE MAX(clean_generation, :clean_through_dirty_generation) END,
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE binding_name = :binding_name AND scope_id = :scope_id
   AND handled_generation < :claimed_request_generation -- so the claim is >= 1 (handled >= 0)
   AND :claimed_request_generation <= requested_generation
   AND (:clean_through_dirty_generation IS NULL
        OR (:clean_through_dirty_generation >= 0 AND :clean_through_dirty_generation <= dirty_generation))
   AND EXISTS (
     SELECT 1 FROM pc_artifact_processing_live_terms
      WHERE supervisor_key = :supervisor_key AND holder_id = :holder_id
        AND supervisor_generation = :supervisor_generation)
RETURNING binding_name, scope_id, 'acknowledged' AS outcome,
          requested_generation, handled_generation, dirty_generation, clean_generation;
-- Full path.
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :claimed_request_generation IS NULL OR :claimed_request_generation < 1
    OR (:clean_through_dirty_generation IS NOT NULL AND :clean_through_dirty_generation < 0);
-- @include pc_aps_assert_term
INSERT INTO pc_aps_signals (code)
SELECT 'intent_not_found'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_artifact_processing_intents
    WHERE binding_name = :binding_name AND scope_id = :scope_id);
INSERT INTO pc_aps_signals (code)
SELECT 'ack_beyond_request'
  FROM pc_artifact_processing_intents
 WHERE binding_name = :binding_name AND scope_id = :scope_id
   AND :claimed_request_generation > requested_generation;
INSERT INTO pc_aps_signals (code)
SELECT 'clean_beyond_dirty'
  FROM pc_artifact_processing_intents
 WHERE binding_name = :binding_name AND scope_id = :scope_id
   AND :clean_through_dirty_generation IS NOT NULL
   AND :clean_through_dirty_generation > dirty_generation;
UPDATE pc_artifact_processing_intents
   SET clean_generation = MAX(clean_generation, :clean_through_dirty_generation),
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE binding_name = :binding_name AND scope_id = :scope_id
   AND :clean_through_dirty_generation IS NOT NULL;
-- Last write before the result: changes() tells whether this acknowledgement advanced handled.
UPDATE pc_artifact_processing_intents
   SET handled_generation = :claimed_request_generation,
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE binding_name = :binding_name AND scope_id = :scope_id
   AND handled_generation < :claimed_request_generation;
SELECT binding_name, scope_id,
       CASE WHEN changes() > 0 THEN 'acknowledged' ELSE 'already_handled' END AS outcome,
       requested_generation, handled_generation, dirty_generation, clean_generation
  FROM pc_artifact_processing_intents
 WHERE binding_name = :binding_name AND scope_id = :scope_id;
