-- Operation: pc_aps_ack_invocation   (SQLite twin: sql/sqlite/pc_aps_ack_invocation.sql; TypeScript: Store.ackInvocation)
-- Purpose: a worker acknowledges its invocation inside its own business transaction, fenced by
--   its term: handled_generation advances to the requested generation captured when the
--   invocation started (never to a newer request, never backwards). Optionally, when the
--   processor found no remaining ordinary work in the snapshot it read at start,
--   clean_generation advances to that snapshot's dirty generation (never beyond
--   dirty_generation, never backwards). A request accepted while the invocation ran stays owed.
-- Transaction: runs INSIDE the caller's transaction, with the business writes it confirms (before
--   or after them: the fence row lock taken here by pc_aps_assert_term, on this connection's
--   fence slot, is held until the caller commits, and a takeover cannot commit before that; calling
--   it first, like pc_aps_assert_term, also stops a stale worker before it writes anything).
-- Parameters:
--   p_supervisor_key, p_holder_id, p_supervisor_generation   the worker's term
--   p_binding_name                 VARCHAR(128)
--   p_scope_id                     VARCHAR(191)
--   p_claimed_request_generation   BIGINT   the requested generation read at start (>= 1)
--   p_clean_through_dirty_generation BIGINT NULL: leave clean_generation alone; otherwise the
--                                           dirty generation of the snapshot read at start
-- Result: one row (binding_name, scope_id, outcome, requested_generation, handled_generation,
--   dirty_generation, clean_generation): outcome 'acknowledged', or 'already_handled' when
--   handled_generation was already >= the claimed generation (handled unchanged; a clean
--   confirmation is still applied, since it only states that the snapshot has no work left).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   term_lost           the worker's term is not the live one.
--   intent_not_found    the key has no intent row.
--   ack_beyond_request  the claimed generation is greater than requested_generation.
--   clean_beyond_dirty  the clean confirmation is greater than dirty_generation.
--   invalid_argument    claimed generation < 1 or negative clean confirmation.
CREATE PROCEDURE pc_aps_ack_invocation(
  IN p_supervisor_key                 VARCHAR(191),
  IN p_holder_id                      VARCHAR(128),
  IN p_supervisor_generation          BIGINT,
  IN p_binding_name                   VARCHAR(128),
  IN p_scope_id                       VARCHAR(191),
  IN p_claimed_request_generation     BIGINT,
  IN p_clean_through_dirty_generation BIGINT
)
BEGIN
  DECLARE v_found     INT DEFAULT 1;
  DECLARE v_requested BIGINT;
  DECLARE v_handled   BIGINT;
  DECLARE v_dirty     BIGINT;
  DECLARE v_clean     BIGINT;
  DECLARE v_outcome   VARCHAR(24);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;

  IF p_claimed_request_generation IS NULL OR p_claimed_request_generation < 1
     OR (p_clean_through_dirty_generation IS NOT NULL AND p_clean_through_dirty_generation < 0) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  CALL pc_aps_assert_term(p_supervisor_key, p_holder_id, p_supervisor_generation);

  SELECT requested_generation, handled_generation, dirty_generation, clean_generation
    INTO v_requested, v_handled, v_dirty, v_clean
    FROM pc_artifact_processing_intents
   WHERE binding_name = p_binding_name AND scope_id = p_scope_id
     FOR UPDATE;
  IF v_found = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'intent_not_found';
  END IF;
  IF p_claimed_request_generation > v_requested THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ack_beyond_request';
  END IF;
  IF p_clean_through_dirty_generation IS NOT NULL AND p_clean_through_dirty_generation > v_dirty THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'clean_beyond_dirty';
  END IF;

  IF v_handled >= p_claimed_request_generation THEN
    SET v_outcome = 'already_handled';
  ELSE
    SET v_outcome = 'acknowledged';
    SET v_handled = p_claimed_request_generation;
  END IF;
  IF p_clean_through_dirty_generation IS NOT NULL AND p_clean_through_dirty_generation > v_clean THEN
    SET v_clean = p_clean_through_dirty_generation;
  END IF;

  UPDATE pc_artifact_processing_intents
     SET handled_generation = v_handled, clean_generation = v_clean, updated_at = UTC_TIMESTAMP(3)
   WHERE binding_name = p_binding_name AND scope_id = p_scope_id;

  SELECT p_binding_name AS binding_name, p_scope_id AS scope_id, v_outcome AS outcome,
         v_requested AS requested_generation, v_handled AS handled_generation,
         v_dirty AS dirty_generation, v_clean AS clean_generation;
END
