-- Operation: pc_aps_switch_mode   (SQLite twin: sql/sqlite/pc_aps_switch_mode.sql; TypeScript: Store.switchMode)
-- Purpose: the database part of `apsup mode-switch` (RFC 9), in one transaction: lock the
--   runtime row (serializes with starts) and every lease row of the old mode THE DATABASE HOLDS
--   (switching to dedicated: 'global'; to global: every 'artifact:%' key, also of a family no
--   longer in any families module, RFC 9 step 2); refuse while any of them has a holder with an
--   unexpired lease; set maintenance; invalidate every one of those terms (generation + 1, holder
--   and expiry cleared, on the lease row and its fence rows, so every worker of the old mode is
--   fenced out at its next write); record the new mode and clear maintenance. Requests, dirty
--   marks, checkpoints and scans are untouched.
-- Transaction: owns its transaction. Do not call inside an open transaction.
-- Parameters:
--   p_to_mode   VARCHAR(16)  'global' or 'dedicated'; the old mode's keys follow from it
-- Result: two result sets: (mode, maintenance, db_now); then one row per invalidated key
--   (supervisor_key, holder_id=NULL, supervisor_generation (new), expires_at=NULL, outcome='invalidated').
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  unknown mode.
--   live_candidate    an old-mode key has a holder with an unexpired lease.
CREATE PROCEDURE pc_aps_switch_mode(
  IN p_to_mode VARCHAR(16)
)
BEGIN
  DECLARE v_now     DATETIME(3);
  DECLARE v_live    BIGINT DEFAULT 0;
  DECLARE v_mode    VARCHAR(16) DEFAULT NULL;
  DECLARE v_pattern VARCHAR(16);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_to_mode IS NULL OR p_to_mode NOT IN ('global', 'dedicated') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  -- The old mode's keys: a constant LIKE prefix (a primary-key range; COMPATIBILITY row 44).
  SET v_pattern = IF(p_to_mode = 'dedicated', 'global', 'artifact:%');

  START TRANSACTION;
  SET v_now = UTC_TIMESTAMP(3);
  INSERT INTO pc_artifact_processing_runtime (runtime_id, mode, maintenance, updated_at)
  VALUES (1, NULL, 0, v_now)
  ON DUPLICATE KEY UPDATE runtime_id = runtime_id;
  SELECT mode INTO v_mode
    FROM pc_artifact_processing_runtime
   WHERE runtime_id = 1
     FOR UPDATE;

  SELECT COUNT(*) INTO v_live
    FROM pc_artifact_processing_leases
   WHERE supervisor_key LIKE v_pattern
     AND holder_id IS NOT NULL
     AND expires_at IS NOT NULL
     AND expires_at > v_now
     FOR UPDATE;
  IF v_live > 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'live_candidate';
  END IF;

  UPDATE pc_artifact_processing_runtime SET maintenance = 1, updated_at = v_now WHERE runtime_id = 1;
  UPDATE pc_artifact_processing_leases
     SET holder_id = NULL, supervisor_generation = supervisor_generation + 1, expires_at = NULL, updated_at = v_now
   WHERE supervisor_key LIKE v_pattern;
  -- Fence rows of every invalidated key through the one writer (migration 0021, COMPATIBILITY row 110).
  BEGIN
    DECLARE v_done INT DEFAULT 0;
    DECLARE v_key  VARCHAR(191);
    DECLARE v_gen  BIGINT;
    DECLARE c_keys CURSOR FOR
      SELECT supervisor_key, supervisor_generation FROM pc_artifact_processing_leases
       WHERE supervisor_key LIKE v_pattern ORDER BY supervisor_key;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
    OPEN c_keys;
    fence_keys: LOOP
      FETCH c_keys INTO v_key, v_gen;
      IF v_done = 1 THEN
        LEAVE fence_keys;
      END IF;
      CALL pc_aps_write_fences(v_key, NULL, v_gen);
    END LOOP;
    CLOSE c_keys;
  END;
  UPDATE pc_artifact_processing_runtime SET mode = p_to_mode, maintenance = 0, updated_at = v_now WHERE runtime_id = 1;
  COMMIT;

  SELECT p_to_mode AS mode, 0 AS maintenance, v_now AS db_now;
  SELECT supervisor_key, holder_id, supervisor_generation, expires_at, 'invalidated' AS outcome, v_now AS db_now
    FROM pc_artifact_processing_leases
   WHERE supervisor_key LIKE v_pattern
   ORDER BY supervisor_key;
END
