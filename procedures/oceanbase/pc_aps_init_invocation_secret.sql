-- Operation: pc_aps_init_invocation_secret   (SQLite twin: sql/sqlite/pc_aps_init_invocation_secret.sql; TypeScript: Store.initInvocationSecret)
-- Purpose: records the secret that binds an acknowledgement to the invocation it belongs to, once, and returns it.
--   The first host's random candidate is kept (the primary key decides between hosts starting
--   at once); every later call returns that one. The host derives each invocation's token from
--   it (pc_aps_ack_invocation_token); a processor's account has no privilege on this procedure
--   nor on pc_aps_invocation_secret, so it cannot forge the token of another scope.
-- Transaction: owns its transaction.
-- Parameters:
--   p_candidate CHAR(64)   64 hexadecimal characters from the host's random source
-- Result: one row (secret).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): invalid_argument (not 64 hexadecimal characters).
CREATE PROCEDURE pc_aps_init_invocation_secret(
  IN p_candidate CHAR(64)
)
BEGIN
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  IF p_candidate IS NULL OR CHAR_LENGTH(p_candidate) <> 64 OR p_candidate NOT REGEXP '^[0-9a-f]{64}$' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  START TRANSACTION;
  INSERT INTO pc_aps_invocation_secret (id, secret, created_at) VALUES (1, p_candidate, UTC_TIMESTAMP(3))
    ON DUPLICATE KEY UPDATE id = id;
  SELECT secret FROM pc_aps_invocation_secret WHERE id = 1;
  COMMIT;
END
