-- Operation: pc_aps_list_dirty_keys   (MySQL twin: procedures/oceanbase/pc_aps_list_dirty_keys.sql; TypeScript: BaseStore.listDirtyKeys)
-- Purpose: the keys of one binding with ordinary work (dirty_generation > clean_generation), a
--   page at a time in pending_sequence order, for operators (the web console's family page).
--   Reads only: no scan mark, no request. An index range read on the partial index ix_pc_api_scan.
-- Transaction: none (a single read).
-- Parameters:
--   :binding_name
--   :after_sequence  keys with pending_sequence > this (0 for the first page)
--   :page_limit      page size, 1 .. 5000
-- Result: up to :page_limit rows (scope_id, pending_sequence, requested_generation,
--   handled_generation, dirty_generation, clean_generation) by pending_sequence; fewer rows than
--   the limit: no more dirty keys after the last one.
-- Errors (message):
--   invalid_argument  limit out of range or negative cursor (checked by the runner before the
--                     read, since a read-only script cannot raise).
SELECT scope_id, pending_sequence, requested_generation, handled_generation,
       dirty_generation, clean_generation
  FROM pc_artifact_processing_intents
 WHERE binding_name = :binding_name
   AND dirty_generation > clean_generation
   AND pending_sequence > :after_sequence
 ORDER BY pending_sequence
 LIMIT :page_limit;
