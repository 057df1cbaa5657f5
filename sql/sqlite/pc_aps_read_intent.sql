-- Operation: pc_aps_read_intent   (MySQL twin: procedures/oceanbase/pc_aps_read_intent.sql; TypeScript: Store.readIntent)
-- Purpose: the intent snapshot a processor reads when an invocation starts.
-- Transaction: none needed; inside the caller's transaction it reads that transaction's view.
-- Parameters:
--   :binding_name
--   :scope_id
-- Result: zero rows (never registered) or one row (binding_name, scope_id, pending_sequence,
--   dirty_generation, clean_generation, requested_generation, handled_generation,
--   last_auto_scan_generation, db_now).
-- Errors: none.
SELECT binding_name, scope_id, pending_sequence, dirty_generation, clean_generation,
       requested_generation, handled_generation, last_auto_scan_generation,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_artifact_processing_intents
 WHERE binding_name = :binding_name AND scope_id = :scope_id;
