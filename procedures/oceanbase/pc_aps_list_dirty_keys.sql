-- Operation: pc_aps_list_dirty_keys   (SQLite twin: sql/sqlite/pc_aps_list_dirty_keys.sql; TypeScript: BaseStore.listDirtyKeys)
-- Purpose: list the keys of one binding with ordinary work (dirty_generation > clean_generation), one page at a time in pending_sequence order, for operators.
--   The web console's family page. Reads only: no scan mark, no request (admission is
--   pc_aps_admit_scan_page's). An index range read on ix_pc_api_scan (binding_name,
--   has_ordinary_work, pending_sequence).
-- Transaction: none needed (a single consistent read).
-- Parameters:
--   p_binding_name   VARCHAR(128)
--   p_after_sequence BIGINT   return keys with pending_sequence > this (0 for the first page)
--   p_page_limit     INT      page size, 1 .. 5000
-- Result: up to p_page_limit rows (scope_id, pending_sequence, requested_generation,
--   handled_generation, dirty_generation, clean_generation) ordered by pending_sequence.
--   Fewer rows than p_page_limit: no more dirty keys after the last one returned.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  limit out of range or negative cursor.
CREATE PROCEDURE pc_aps_list_dirty_keys(
  IN p_binding_name   VARCHAR(128),
  IN p_after_sequence BIGINT,
  IN p_page_limit     INT
)
BEGIN
  IF p_page_limit IS NULL OR p_page_limit < 1 OR p_page_limit > 5000 OR p_after_sequence IS NULL OR p_after_sequence < 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SELECT scope_id, pending_sequence, requested_generation, handled_generation,
         dirty_generation, clean_generation
    FROM pc_artifact_processing_intents
   WHERE binding_name = p_binding_name
     AND has_ordinary_work = 1
     AND pending_sequence > p_after_sequence
   ORDER BY pending_sequence
   LIMIT p_page_limit;
END
