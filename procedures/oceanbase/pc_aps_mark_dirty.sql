-- Operation: pc_aps_mark_dirty   (SQLite twin: sql/sqlite/pc_aps_mark_dirty.sql; TypeScript: Store.markDirty)
-- Purpose: record that a scheduling key (binding_name, scope_id) may have ordinary work:
--   dirty_generation + 1. The first mark of a key registers it: the row is created and gets its
--   pending_sequence (AUTO_INCREMENT, never reused; the row is never deleted afterwards).
--   Needs no leadership: domain APIs call it.
-- Transaction: runs INSIDE the caller's transaction, so the domain input and its dirty mark
--   commit together. Never starts or commits a transaction.
-- Parameters:
--   p_binding_name VARCHAR(128)
--   p_scope_id     VARCHAR(191)
-- Result: one row (binding_name, scope_id, pending_sequence, dirty_generation, clean_generation,
--   requested_generation, handled_generation, last_auto_scan_generation): the intent after the mark.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  empty binding or scope.
--   maintenance       the deployment is in maintenance (`apsup maintenance on`, a mode switch):
--                     domain writes and explicit triggers pause; the caller's transaction
--                     (domain input included) must roll back. Read without a lock (READ
--                     COMMITTED): the switch never depends on it, it only drains new writes.
CREATE PROCEDURE pc_aps_mark_dirty(
  IN p_binding_name VARCHAR(128),
  IN p_scope_id     VARCHAR(191)
)
BEGIN
  DECLARE v_now DATETIME(3);
  IF p_binding_name IS NULL OR p_binding_name = '' OR p_scope_id IS NULL OR p_scope_id = '' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  IF EXISTS (SELECT 1 FROM pc_artifact_processing_runtime WHERE runtime_id = 1 AND maintenance = 1) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'maintenance';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);

  -- Update first: an existing key must not consume an AUTO_INCREMENT value.
  UPDATE pc_artifact_processing_intents
     SET dirty_generation = dirty_generation + 1, updated_at = v_now
   WHERE binding_name = p_binding_name AND scope_id = p_scope_id;

  IF ROW_COUNT() = 0 THEN
    -- First registration; a concurrent first registration of the same key falls into the
    -- duplicate-key branch and becomes an ordinary increment.
    INSERT INTO pc_artifact_processing_intents
           (binding_name, scope_id, dirty_generation, created_at, updated_at)
    VALUES (p_binding_name, p_scope_id, 1, v_now, v_now)
    ON DUPLICATE KEY UPDATE dirty_generation = dirty_generation + 1, updated_at = v_now;
  END IF;

  SELECT binding_name, scope_id, pending_sequence, dirty_generation, clean_generation,
         requested_generation, handled_generation, last_auto_scan_generation
    FROM pc_artifact_processing_intents
   WHERE binding_name = p_binding_name AND scope_id = p_scope_id;
END
