-- Operation: pc_aps_list_owed_requests   (MySQL twin: procedures/oceanbase/pc_aps_list_owed_requests.sql; TypeScript: Store.listOwedRequests)
-- Purpose: discover owed invocations (requested_generation > handled_generation) of one binding,
--   a page at a time in pending_sequence order, independent of any scan position. An index
--   range read on the partial index ix_pc_api_owed.
-- Transaction: none (a single read).
-- Parameters:
--   :binding_name
--   :after_sequence  keys with pending_sequence > this (0 for the first page)
--   :page_limit      page size, 1 .. 5000
-- Result: up to :page_limit rows (scope_id, pending_sequence, requested_generation,
--   handled_generation, dirty_generation, clean_generation) by pending_sequence; fewer rows than
--   the limit: no more owed keys after the last one.
-- Errors (message):
--   invalid_argument  limit out of range or negative cursor (checked by the runner before the
--                     read, since a read-only script cannot raise).
SELECT scope_id, pending_sequence, requested_generation, handled_generation,
       dirty_generation, clean_generation
  FROM pc_artifact_processing_intents
 WHERE binding_name = :binding_name
   AND requested_generation > handled_generation
   AND pending_sequence > :after_sequence
 ORDER BY pending_sequence
 LIMIT :page_limit;
