-- Operation: pc_aps_accept_request_batch   (SQLite twin: sql/sqlite/pc_aps_accept_request_batch.sql; TypeScript: Store.acceptRequestBatch)
-- Purpose: pc_aps_accept_request for up to 1000 keys of one binding in one call, with the result of the same single calls in list order.
--   Each item is requested_generation + 1 (a key named twice gets two requests, its two items
--   reporting the generations after each; the dispatcher merges them), and new keys are registered in the order of
--   their first item (pending_sequence). Needs no leadership. The body is
--   pc_aps_intake_batch, shared with pc_aps_mark_dirty_batch (the counter is the only
--   difference).
-- Transaction: runs INSIDE the caller's transaction, like pc_aps_accept_request: the request inputs
--   and the requests commit together, and an error leaves the caller to roll back every request of
--   the batch. Never starts or commits a transaction.
-- Parameters:
--   p_binding_name VARCHAR(128)
--   p_scope_ids    MEDIUMTEXT   the scope ids concatenated, no separator
--   p_scope_ends   MEDIUMTEXT   each item's end offset into p_scope_ids in UTF-8 bytes, 8 decimal
--                               digits per item, 1..1000 items (COMPATIBILITY row 111)
-- Result: one row per item in list order, the row pc_aps_accept_request returns for it: (binding_name,
--   scope_id, pending_sequence, dirty_generation, clean_generation, requested_generation,
--   handled_generation, last_auto_scan_generation), the intent after that item's request.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  empty binding, no items or more than 1000, a malformed index, an item that
--                     is empty, not UTF-8, longer than 191 characters or ends with a space.
--   maintenance       the deployment is in maintenance (as pc_aps_accept_request): nothing of the
--                     batch may commit; the caller's transaction must roll back.
CREATE PROCEDURE pc_aps_accept_request_batch(
  IN p_binding_name VARCHAR(128),
  IN p_scope_ids    MEDIUMTEXT,
  IN p_scope_ends   MEDIUMTEXT
)
BEGIN
  CALL pc_aps_intake_batch('requested', p_binding_name, p_scope_ids, p_scope_ends);
END
