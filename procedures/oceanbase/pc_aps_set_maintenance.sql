-- Operation: pc_aps_set_maintenance   (SQLite twin: sql/sqlite/pc_aps_set_maintenance.sql; TypeScript: Store.setMaintenance)
-- Purpose: turn the deployment's maintenance window on or off (RFC 9, step 1 and 3 of a mode
--   switch; also any storage maintenance). While it is on, domain writes (pc_aps_mark_dirty) and
--   explicit triggers (pc_aps_accept_request) are refused with 'maintenance' and runtime starts
--   are refused (pc_aps_claim_runtime_mode); a running supervisor's own control writes are not
--   affected (stop the old candidates as part of the window). pc_aps_switch_mode ends it.
-- Transaction: owns its transaction; the runtime row is locked FOR UPDATE (serializes with
--   starts and mode switches).
-- Parameters:
--   p_maintenance  TINYINT  1 (on) or 0 (off)
-- Result: one row (mode, maintenance, changed (1 when the flag changed), db_now).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  maintenance is not 0 or 1.
CREATE PROCEDURE pc_aps_set_maintenance(
  IN p_maintenance TINYINT
)
BEGIN
  DECLARE v_now     DATETIME(3);
  DECLARE v_mode    VARCHAR(16) DEFAULT NULL;
  DECLARE v_current TINYINT DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_maintenance IS NULL OR p_maintenance NOT IN (0, 1) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  SET v_now = UTC_TIMESTAMP(3);
  INSERT INTO pc_artifact_processing_runtime (runtime_id, mode, maintenance, updated_at)
  VALUES (1, NULL, 0, v_now)
  ON DUPLICATE KEY UPDATE runtime_id = runtime_id;
  SELECT mode, maintenance INTO v_mode, v_current
    FROM pc_artifact_processing_runtime
   WHERE runtime_id = 1
     FOR UPDATE;
  IF v_current <> p_maintenance THEN
    UPDATE pc_artifact_processing_runtime SET maintenance = p_maintenance, updated_at = v_now WHERE runtime_id = 1;
  END IF;
  COMMIT;

  SELECT v_mode AS mode, p_maintenance AS maintenance,
         CASE WHEN v_current <> p_maintenance THEN 1 ELSE 0 END AS changed, v_now AS db_now;
END
