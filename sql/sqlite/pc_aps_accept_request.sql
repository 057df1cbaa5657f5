-- Operation: pc_aps_accept_request   (MySQL twin: procedures/oceanbase/pc_aps_accept_request.sql; TypeScript: Store.acceptRequest)
-- Purpose: accept an explicit request for a scheduling key: requested_generation + 1, owed until
--   a worker acknowledges a generation >= this one. Queued requests merge (the dispatcher reads
--   the latest generation); a request accepted during a run stays owed after that run's
--   acknowledgement. Registers the key if needed. Needs no leadership.
-- Transaction: runs INSIDE the caller's transaction (input reference and request commit
--   together); called on its own, the runner wraps it in BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :binding_name
--   :scope_id
-- Result: one row (binding_name, scope_id, pending_sequence, dirty_generation, clean_generation,
--   requested_generation, handled_generation, last_auto_scan_generation): the intent after the request.
-- Errors (message):
--   invalid_argument  empty binding or scope.
--   maintenance       the deployment is in maintenance (`apsup maintenance on`, a mode switch):
--                     domain writes and explicit triggers pause; the caller's transaction
--                     (domain input included) must roll back.
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :binding_name IS NULL OR :binding_name = '' OR :scope_id IS NULL OR :scope_id = '';
INSERT INTO pc_aps_signals (code)
SELECT 'maintenance'
  FROM pc_artifact_processing_runtime
 WHERE runtime_id = 1 AND maintenance = 1;
-- Update first: an existing key must not consume an AUTOINCREMENT value.
UPDATE pc_artifact_processing_intents
   SET requested_generation = requested_generation + 1,
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE binding_name = :binding_name AND scope_id = :scope_id;
-- First registration only when the update found no row (changes() of the previous statement).
INSERT INTO pc_artifact_processing_intents (binding_name, scope_id, requested_generation)
SELECT :binding_name, :scope_id, 1
 WHERE changes() = 0;
SELECT binding_name, scope_id, pending_sequence, dirty_generation, clean_generation,
       requested_generation, handled_generation, last_auto_scan_generation
  FROM pc_artifact_processing_intents
 WHERE binding_name = :binding_name AND scope_id = :scope_id;
