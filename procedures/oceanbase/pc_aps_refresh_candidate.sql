-- Operation: pc_aps_refresh_candidate   (SQLite twin: sql/sqlite/pc_aps_refresh_candidate.sql; TypeScript: refreshCandidate)
-- Purpose: a running candidate keeps its fingerprint rows live (RFC 8, 10): expires_at := now +
--   ttl on every row of the candidate id that has not expired yet (an expired row stays expired:
--   another start may have registered since, so the candidate registers again instead).
-- Transaction: owns its transaction (one UPDATE, then the count).
-- Parameters:
--   p_candidate_id  VARCHAR(128)
--   p_ttl_ms        INT           1000 .. 3600000
-- Result: one row (live_keys, db_now): the candidate's rows live after the refresh.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  missing id or ttl out of range.
CREATE PROCEDURE pc_aps_refresh_candidate(
  IN p_candidate_id VARCHAR(128),
  IN p_ttl_ms       INT
)
BEGIN
  DECLARE v_now DATETIME(3);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;
  IF p_candidate_id IS NULL OR p_candidate_id = '' OR p_ttl_ms IS NULL OR p_ttl_ms < 1000 OR p_ttl_ms > 3600000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  START TRANSACTION;
  SET v_now = UTC_TIMESTAMP(3);
  UPDATE pc_aps_candidate_fingerprints
     SET expires_at = DATE_ADD(v_now, INTERVAL p_ttl_ms * 1000 MICROSECOND)
   WHERE candidate_id = p_candidate_id
     AND expires_at > v_now;
  SELECT COUNT(*) AS live_keys, v_now AS db_now
    FROM pc_aps_candidate_fingerprints
   WHERE candidate_id = p_candidate_id
     AND expires_at > v_now;
  COMMIT;
END
