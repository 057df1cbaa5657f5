-- Operation: pc_aps_register_candidate   (SQLite twin: sql/sqlite/pc_aps_register_candidate.sql; TypeScript: registerCandidate)
-- Purpose: a runtime start records, per supervisor key, the fingerprint of what it runs with
--   (RFC 8, 10: every process agrees on mode, binding -> family map and trigger capabilities;
--   background candidates also on schedule, budget and timeout), and is refused when a live
--   candidate of the key runs with another one. Starts are serialized on the runtime row (the
--   row pc_aps_claim_runtime_mode locks), so two differing starts cannot both pass the check.
--   A live candidate: another candidate id of the key whose expires_at is in the future. Its
--   shared fingerprint must be equal; its execution fingerprint too when both have one (api
--   candidates have none). Expired rows of the key are deleted.
-- Transaction: owns its transaction. Do not call inside an open transaction.
-- Parameters:
--   p_supervisor_key     VARCHAR(191)  'global' or 'artifact:<family>'
--   p_candidate_id       VARCHAR(128)  this process's candidate id
--   p_role               VARCHAR(16)   'all' | 'api' | 'background'
--   p_shared_sha256      CHAR(64)      sha256 of p_shared_text
--   p_shared_text        MEDIUMTEXT    canonical JSON of the shared part
--   p_execution_sha256   CHAR(64)      NULL for the api role
--   p_execution_text     MEDIUMTEXT    NULL for the api role
--   p_ttl_ms             INT           1000 .. 3600000: the row expires unless refreshed
-- Result: one row (outcome, candidate_id, role, shared_text, execution_text, db_now):
--   outcome 'registered' (this candidate's row; the texts are its own), or 'conflict' (nothing
--   written; the first live candidate that differs, with its texts, oldest first).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  a missing key, id or fingerprint, an unknown role, an execution
--                     fingerprint given for the api role or missing for another, ttl out of range.
CREATE PROCEDURE pc_aps_register_candidate(
  IN p_supervisor_key   VARCHAR(191),
  IN p_candidate_id     VARCHAR(128),
  IN p_role             VARCHAR(16),
  IN p_shared_sha256    CHAR(64),
  IN p_shared_text      MEDIUMTEXT,
  IN p_execution_sha256 CHAR(64),
  IN p_execution_text   MEDIUMTEXT,
  IN p_ttl_ms           INT
)
BEGIN
  DECLARE v_now      DATETIME(3);
  DECLARE v_mode     VARCHAR(16) DEFAULT NULL;
  DECLARE v_other    VARCHAR(128) DEFAULT NULL;
  DECLARE v_role     VARCHAR(16) DEFAULT NULL;
  DECLARE v_shared   MEDIUMTEXT DEFAULT NULL;
  DECLARE v_exec     MEDIUMTEXT DEFAULT NULL;
  DECLARE v_found    INT DEFAULT 1;
  -- No differing live candidate is "no row" (COMPATIBILITY row 15).
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_supervisor_key IS NULL OR p_supervisor_key = '' OR p_candidate_id IS NULL OR p_candidate_id = ''
     OR p_role IS NULL OR p_role NOT IN ('all', 'api', 'background')
     OR p_shared_sha256 IS NULL OR CHAR_LENGTH(p_shared_sha256) <> 64 OR p_shared_text IS NULL
     OR (p_role = 'api' AND (p_execution_sha256 IS NOT NULL OR p_execution_text IS NOT NULL))
     OR (p_role <> 'api' AND (p_execution_sha256 IS NULL OR CHAR_LENGTH(p_execution_sha256) <> 64 OR p_execution_text IS NULL))
     OR p_ttl_ms IS NULL OR p_ttl_ms < 1000 OR p_ttl_ms > 3600000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  SET v_now = UTC_TIMESTAMP(3);
  INSERT INTO pc_artifact_processing_runtime (runtime_id, mode, maintenance, updated_at)
  VALUES (1, NULL, 0, v_now)
  ON DUPLICATE KEY UPDATE runtime_id = runtime_id;
  SELECT mode INTO v_mode
    FROM pc_artifact_processing_runtime
   WHERE runtime_id = 1
     FOR UPDATE;

  SELECT candidate_id, role, shared_text, execution_text
    INTO v_other, v_role, v_shared, v_exec
    FROM pc_aps_candidate_fingerprints
   WHERE supervisor_key = p_supervisor_key
     AND candidate_id <> p_candidate_id
     AND expires_at > v_now
     AND (shared_sha256 <> p_shared_sha256
          OR (execution_sha256 IS NOT NULL AND p_execution_sha256 IS NOT NULL AND execution_sha256 <> p_execution_sha256))
   ORDER BY registered_at, candidate_id
   LIMIT 1;

  IF v_found = 1 AND v_other IS NOT NULL THEN
    COMMIT;
    SELECT 'conflict' AS outcome, v_other AS candidate_id, v_role AS role, v_shared AS shared_text, v_exec AS execution_text, v_now AS db_now;
  ELSE
    DELETE FROM pc_aps_candidate_fingerprints
     WHERE supervisor_key = p_supervisor_key AND expires_at <= v_now;
    INSERT INTO pc_aps_candidate_fingerprints
      (supervisor_key, candidate_id, role, shared_sha256, shared_text, execution_sha256, execution_text, registered_at, expires_at)
    VALUES
      (p_supervisor_key, p_candidate_id, p_role, p_shared_sha256, p_shared_text, p_execution_sha256, p_execution_text,
       v_now, DATE_ADD(v_now, INTERVAL p_ttl_ms * 1000 MICROSECOND))
    ON DUPLICATE KEY UPDATE
      role = p_role, shared_sha256 = p_shared_sha256, shared_text = p_shared_text,
      execution_sha256 = p_execution_sha256, execution_text = p_execution_text,
      expires_at = DATE_ADD(v_now, INTERVAL p_ttl_ms * 1000 MICROSECOND);
    COMMIT;
    SELECT 'registered' AS outcome, p_candidate_id AS candidate_id, p_role AS role, p_shared_text AS shared_text,
           p_execution_text AS execution_text, v_now AS db_now;
  END IF;
END
