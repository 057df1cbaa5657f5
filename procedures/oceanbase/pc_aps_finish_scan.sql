-- Operation: pc_aps_finish_scan   (SQLite twin: sql/sqlite/pc_aps_finish_scan.sql; TypeScript: Store.finishScan)
-- Purpose: fenced end of a scan whose pages are all admitted: clears scan_in_progress. Does not
--   wait for any worker, retry or business cursor. Idempotent for the same generation.
-- Transaction: owns its transaction; the caller's fence row (pc_aps_assert_term) and the
--   binding-state row are locked, in that order.
-- Parameters:
--   p_supervisor_key, p_holder_id, p_supervisor_generation   the caller's term
--   p_binding_name     VARCHAR(128)
--   p_scan_generation  BIGINT   the generation returned by pc_aps_begin_scan
-- Result: one row (binding_name, outcome, scan_generation, last_schedule_checkpoint_at, db_now)
--   outcome: 'finished' | 'already_finished'.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   term_lost   the caller's term is not the live one.
--   scan_stale  the binding's scan generation is not p_scan_generation.
CREATE PROCEDURE pc_aps_finish_scan(
  IN p_supervisor_key        VARCHAR(191),
  IN p_holder_id             VARCHAR(128),
  IN p_supervisor_generation BIGINT,
  IN p_binding_name          VARCHAR(128),
  IN p_scan_generation       BIGINT
)
BEGIN
  DECLARE v_found       INT DEFAULT 1;
  DECLARE v_now         DATETIME(3);
  DECLARE v_generation  BIGINT DEFAULT NULL;
  DECLARE v_in_progress INT DEFAULT 0;
  DECLARE v_checkpoint  DATETIME(3) DEFAULT NULL;
  DECLARE v_outcome     VARCHAR(24);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  START TRANSACTION;
  CALL pc_aps_assert_term(p_supervisor_key, p_holder_id, p_supervisor_generation);
  SET v_now = UTC_TIMESTAMP(3);
  SELECT scan_generation, scan_in_progress, last_schedule_checkpoint_at
    INTO v_generation, v_in_progress, v_checkpoint
    FROM pc_artifact_processing_binding_states
   WHERE binding_name = p_binding_name
     FOR UPDATE;
  IF v_found = 0 OR p_scan_generation IS NULL OR v_generation <> p_scan_generation THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'scan_stale';
  END IF;
  IF v_in_progress = 1 THEN
    UPDATE pc_artifact_processing_binding_states
       SET scan_in_progress = 0, scan_finished_at = v_now, updated_at = v_now
     WHERE binding_name = p_binding_name;
    SET v_outcome = 'finished';
  ELSE
    SET v_outcome = 'already_finished';
  END IF;
  COMMIT;

  SELECT p_binding_name AS binding_name, v_outcome AS outcome, v_generation AS scan_generation,
         v_checkpoint AS last_schedule_checkpoint_at, v_now AS db_now;
END
