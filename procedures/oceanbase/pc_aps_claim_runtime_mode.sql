-- Operation: pc_aps_claim_runtime_mode   (SQLite twin: sql/sqlite/pc_aps_claim_runtime_mode.sql; TypeScript: Store.claimRuntimeMode)
-- Purpose: a runtime start (every role) declares its mode: recorded when none is recorded yet
--   (first start), accepted when it equals the recorded one, refused when the database records
--   the other mode (only `apsup mode-switch` changes it) or while maintenance is on. The runtime
--   row is locked, so a start serializes with pc_aps_switch_mode.
-- Transaction: owns its transaction. Do not call inside an open transaction.
-- Parameters:
--   p_mode  VARCHAR(16)  'global' or 'dedicated'
-- Result: one row (mode, maintenance, outcome 'recorded'|'matched', db_now)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  mode is not global or dedicated.
--   maintenance       a mode switch is in progress.
--   mode_mismatch     the database records the other mode.
CREATE PROCEDURE pc_aps_claim_runtime_mode(
  IN p_mode VARCHAR(16)
)
BEGIN
  DECLARE v_mode        VARCHAR(16) DEFAULT NULL;
  DECLARE v_maintenance TINYINT DEFAULT 0;
  DECLARE v_outcome     VARCHAR(16) DEFAULT 'matched';
  DECLARE v_now         DATETIME(3);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_mode IS NULL OR p_mode NOT IN ('global', 'dedicated') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  SET v_now = UTC_TIMESTAMP(3);
  INSERT INTO pc_artifact_processing_runtime (runtime_id, mode, maintenance, updated_at)
  VALUES (1, NULL, 0, v_now)
  ON DUPLICATE KEY UPDATE runtime_id = runtime_id;
  SELECT mode, maintenance INTO v_mode, v_maintenance
    FROM pc_artifact_processing_runtime
   WHERE runtime_id = 1
     FOR UPDATE;
  IF v_maintenance = 1 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'maintenance';
  END IF;
  IF v_mode IS NOT NULL AND v_mode <> p_mode THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'mode_mismatch';
  END IF;
  IF v_mode IS NULL THEN
    UPDATE pc_artifact_processing_runtime SET mode = p_mode, updated_at = v_now WHERE runtime_id = 1;
    SET v_outcome = 'recorded';
  END IF;
  COMMIT;

  SELECT p_mode AS mode, v_maintenance AS maintenance, v_outcome AS outcome, v_now AS db_now;
END
