-- Operation: pc_aps_begin_fenced   (SQLite twin: sql/sqlite/pc_aps_begin_fenced.sql; TypeScript: Store.fencedTransaction)
-- Purpose: opens a fenced business transaction in ONE call: START TRANSACTION, then
--   pc_aps_assert_term (the fence row of this connection's slot locked FOR UPDATE, holder,
--   generation and expiry validated against the database clock). The transaction stays OPEN
--   when the call returns, with the fence row lock held: the caller runs its business writes on
--   the same connection and COMMITs (or ROLLBACKs). It saves the separate START TRANSACTION round
--   trip, so a fenced commit costs the round trips of an unfenced one (START+check, writes,
--   COMMIT).
-- Transaction: OPENS the caller's transaction (never commits it). Do not call it inside an open
--   transaction (START TRANSACTION would commit that one implicitly).
-- Parameters:
--   p_supervisor_key        VARCHAR(191)  'global' or 'artifact:<family>'
--   p_holder_id             VARCHAR(128)  holder of the term the caller claims
--   p_supervisor_generation BIGINT        generation of the term the caller claims
-- Result: no result set.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): those of pc_aps_assert_term (term_lost); the
--   transaction is rolled back before the error is raised, so none is left open.
CREATE PROCEDURE pc_aps_begin_fenced(
  IN p_supervisor_key        VARCHAR(191),
  IN p_holder_id             VARCHAR(128),
  IN p_supervisor_generation BIGINT
)
BEGIN
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  START TRANSACTION;
  CALL pc_aps_assert_term(p_supervisor_key, p_holder_id, p_supervisor_generation);
END
