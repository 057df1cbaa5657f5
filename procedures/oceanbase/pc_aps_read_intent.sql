-- Operation: pc_aps_read_intent   (SQLite twin: sql/sqlite/pc_aps_read_intent.sql; TypeScript: Store.readIntent)
-- Purpose: the intent snapshot a processor reads when an invocation starts: the requested
--   generation it will acknowledge and the dirty generation it may confirm as clean.
-- Transaction: none needed; inside the caller's transaction it reads that transaction's view.
-- Parameters:
--   p_binding_name VARCHAR(128)
--   p_scope_id     VARCHAR(191)
-- Result: zero rows (key never registered) or one row (binding_name, scope_id, pending_sequence,
--   dirty_generation, clean_generation, requested_generation, handled_generation,
--   last_auto_scan_generation, db_now).
-- Errors: none.
CREATE PROCEDURE pc_aps_read_intent(
  IN p_binding_name VARCHAR(128),
  IN p_scope_id     VARCHAR(191)
)
BEGIN
  SELECT binding_name, scope_id, pending_sequence, dirty_generation, clean_generation,
         requested_generation, handled_generation, last_auto_scan_generation,
         UTC_TIMESTAMP(3) AS db_now
    FROM pc_artifact_processing_intents
   WHERE binding_name = p_binding_name AND scope_id = p_scope_id;
END
