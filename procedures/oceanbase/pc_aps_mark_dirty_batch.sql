-- Operation: pc_aps_mark_dirty_batch   (SQLite twin: sql/sqlite/pc_aps_mark_dirty_batch.sql; TypeScript: Store.markDirtyBatch)
-- Purpose: pc_aps_mark_dirty for up to 1000 keys of one binding in one call: for each item, in
--   list order, dirty_generation + 1 (a key's first mark registers it and gives it its
--   pending_sequence). The result is exactly that of the same single calls in the same order: a
--   key named twice is marked twice (its two items report the generations after each mark).
--   Needs no leadership: domain APIs call it.
-- Transaction: runs INSIDE the caller's transaction, like pc_aps_mark_dirty: the domain inputs
--   and their marks commit together, and an error leaves the caller to roll back every mark of
--   the batch. Never starts or commits a transaction.
-- Parameters:
--   p_binding_name VARCHAR(128)
--   p_scope_ids    MEDIUMTEXT   comma-separated scope ids (scope ids never contain commas), 1..1000 items
-- Result: one row of comma-separated lists in the order of p_scope_ids, the intent after each
--   item's mark: (pending_sequences, dirty_generations, clean_generations, requested_generations,
--   handled_generations, last_auto_scan_generations).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  empty binding, empty list, an empty item, more than 1000 items.
--   maintenance       the deployment is in maintenance (as pc_aps_mark_dirty): nothing of the
--                     batch may commit; the caller's transaction must roll back.
CREATE PROCEDURE pc_aps_mark_dirty_batch(
  IN p_binding_name VARCHAR(128),
  IN p_scope_ids    MEDIUMTEXT
)
BEGIN
  DECLARE v_now        DATETIME(3);
  DECLARE v_rest       MEDIUMTEXT;
  DECLARE v_pos        INT;
  DECLARE v_i          INT DEFAULT 0;
  DECLARE v_scope      VARCHAR(191);
  DECLARE v_seq        BIGINT;
  DECLARE v_dirty      BIGINT;
  DECLARE v_clean      BIGINT;
  DECLARE v_requested  BIGINT;
  DECLARE v_handled    BIGINT;
  DECLARE v_scan       BIGINT;
  DECLARE v_seqs       MEDIUMTEXT DEFAULT '';
  DECLARE v_dirties    MEDIUMTEXT DEFAULT '';
  DECLARE v_cleans     MEDIUMTEXT DEFAULT '';
  DECLARE v_requesteds MEDIUMTEXT DEFAULT '';
  DECLARE v_handleds   MEDIUMTEXT DEFAULT '';
  DECLARE v_scans      MEDIUMTEXT DEFAULT '';
  DECLARE v_sep        VARCHAR(1) DEFAULT '';

  IF p_binding_name IS NULL OR p_binding_name = '' OR p_scope_ids IS NULL OR p_scope_ids = '' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  IF CHAR_LENGTH(p_scope_ids) - CHAR_LENGTH(REPLACE(p_scope_ids, ',', '')) >= 1000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  IF EXISTS (SELECT 1 FROM pc_artifact_processing_runtime WHERE runtime_id = 1 AND maintenance = 1) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'maintenance';
  END IF;
  SET v_now = UTC_TIMESTAMP(3);
  SET v_rest = CONCAT(p_scope_ids, ',');

  -- Each step cuts the first item off the rest (COMPATIBILITY row 80: linear in the list).
  WHILE v_rest <> '' DO
    SET v_i = v_i + 1;
    SET v_pos = LOCATE(',', v_rest);
    SET v_scope = LEFT(v_rest, v_pos - 1);
    SET v_rest = SUBSTRING(v_rest, v_pos + 1);
    IF v_scope = '' THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
    END IF;

    -- As pc_aps_mark_dirty: update first, an existing key consumes no AUTO_INCREMENT value.
    UPDATE pc_artifact_processing_intents
       SET dirty_generation = dirty_generation + 1, updated_at = v_now
     WHERE binding_name = p_binding_name AND scope_id = v_scope;
    IF ROW_COUNT() = 0 THEN
      INSERT INTO pc_artifact_processing_intents
             (binding_name, scope_id, dirty_generation, created_at, updated_at)
      VALUES (p_binding_name, v_scope, 1, v_now, v_now)
      ON DUPLICATE KEY UPDATE dirty_generation = dirty_generation + 1, updated_at = v_now;
    END IF;

    SELECT pending_sequence, dirty_generation, clean_generation, requested_generation, handled_generation, last_auto_scan_generation
      INTO v_seq, v_dirty, v_clean, v_requested, v_handled, v_scan
      FROM pc_artifact_processing_intents
     WHERE binding_name = p_binding_name AND scope_id = v_scope;
    SET v_seqs = CONCAT(v_seqs, v_sep, v_seq);
    SET v_dirties = CONCAT(v_dirties, v_sep, v_dirty);
    SET v_cleans = CONCAT(v_cleans, v_sep, v_clean);
    SET v_requesteds = CONCAT(v_requesteds, v_sep, v_requested);
    SET v_handleds = CONCAT(v_handleds, v_sep, v_handled);
    SET v_scans = CONCAT(v_scans, v_sep, v_scan);
    SET v_sep = ',';
  END WHILE;

  SELECT v_seqs AS pending_sequences, v_dirties AS dirty_generations, v_cleans AS clean_generations,
         v_requesteds AS requested_generations, v_handleds AS handled_generations,
         v_scans AS last_auto_scan_generations;
END
