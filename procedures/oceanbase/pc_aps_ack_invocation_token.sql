-- Operation: pc_aps_ack_invocation_token   (SQLite twin: sql/sqlite/pc_aps_ack_invocation_token.sql; TypeScript: Store.ackInvocationWithToken)
-- Purpose: a worker acknowledges its own invocation inside its business transaction: pc_aps_ack_invocation, once the token proves the host dispatched this invocation.
--   The token is SHA2(CONCAT(secret, '|', SHA2(CONCAT(secret, '|', key, '|', holder, '|',
--   generation, '|', binding, '|', scope, '|', claimed generation), 256)), 256) over the secret of
--   pc_aps_invocation_secret (the nested hash: no length extension). A processor's account may
--   call this procedure, not pc_aps_ack_invocation: knowing its term, it still cannot mark another
--   scope's request handled (issue 40).
-- Transaction: runs INSIDE the caller's transaction (as pc_aps_ack_invocation).
-- Parameters:
--   p_supervisor_key, p_holder_id, p_supervisor_generation   the worker's term
--   p_binding_name                   VARCHAR(128)
--   p_scope_id                       VARCHAR(191)
--   p_claimed_request_generation     BIGINT   the requested generation read at start (>= 1)
--   p_clean_through_dirty_generation BIGINT   NULL, or the dirty generation of the start snapshot
--   p_invocation_token               CHAR(64) the token the host gave the worker with the invocation
-- Result: the row of pc_aps_ack_invocation.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): invocation_token_mismatch (no secret recorded, or
--   the token is not this invocation's), then those of pc_aps_ack_invocation.
CREATE PROCEDURE pc_aps_ack_invocation_token(
  IN p_supervisor_key                 VARCHAR(191),
  IN p_holder_id                      VARCHAR(128),
  IN p_supervisor_generation          BIGINT,
  IN p_binding_name                   VARCHAR(128),
  IN p_scope_id                       VARCHAR(191),
  IN p_claimed_request_generation     BIGINT,
  IN p_clean_through_dirty_generation BIGINT,
  IN p_invocation_token               CHAR(64)
)
BEGIN
  DECLARE v_secret CHAR(64) DEFAULT NULL;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_secret = NULL;
  SELECT secret INTO v_secret FROM pc_aps_invocation_secret WHERE id = 1;
  IF v_secret IS NULL OR p_invocation_token IS NULL
     OR p_invocation_token <> SHA2(CONCAT(v_secret, '|', SHA2(CONCAT(v_secret, '|', p_supervisor_key, '|', p_holder_id, '|',
                                  p_supervisor_generation, '|', p_binding_name, '|', p_scope_id, '|',
                                  p_claimed_request_generation), 256)), 256) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invocation_token_mismatch';
  END IF;
  CALL pc_aps_ack_invocation(p_supervisor_key, p_holder_id, p_supervisor_generation, p_binding_name,
                             p_scope_id, p_claimed_request_generation, p_clean_through_dirty_generation);
END
