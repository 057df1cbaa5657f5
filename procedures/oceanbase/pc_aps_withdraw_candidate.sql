-- Operation: pc_aps_withdraw_candidate   (SQLite twin: sql/sqlite/pc_aps_withdraw_candidate.sql; TypeScript: withdrawCandidate)
-- Purpose: a candidate that stops (or was refused) removes its fingerprint rows, so a later
--   start with another configuration is not compared with it (RFC 8, 10).
-- Transaction: owns its transaction (one DELETE).
-- Parameters:
--   p_candidate_id  VARCHAR(128)
-- Result: one row (db_now).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  missing id.
CREATE PROCEDURE pc_aps_withdraw_candidate(
  IN p_candidate_id VARCHAR(128)
)
BEGIN
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  IF p_candidate_id IS NULL OR p_candidate_id = '' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  START TRANSACTION;
  DELETE FROM pc_aps_candidate_fingerprints WHERE candidate_id = p_candidate_id;
  COMMIT;
  SELECT UTC_TIMESTAMP(3) AS db_now;
END
