-- Operation: pc_aps_read_intents   (SQLite twin: sql/sqlite/pc_aps_read_intents.sql; TypeScript: Store.readIntents)
-- Purpose: the start snapshots of several keys of one binding in one call: what
--   pc_aps_read_intent returns for each (the requested generation an invocation will claim and
--   the dirty generation it may confirm as clean). The supervisor reads the keys it dispatches in
--   one turn together.
-- Transaction: none needed (each key is one primary-key read).
-- Parameters:
--   p_binding_name VARCHAR(128)
--   p_scope_ids    MEDIUMTEXT   comma-separated scope ids (scope ids never contain commas), 1..1000 items
-- Result: one row of comma-separated lists in the order of p_scope_ids (an empty item where a key
--   was never registered): (pending_sequences, dirty_generations, clean_generations,
--   requested_generations, handled_generations, last_auto_scan_generations), and db_now.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): invalid_argument (empty list, an empty item, more than
--   1000 items).
CREATE PROCEDURE pc_aps_read_intents(
  IN p_binding_name VARCHAR(128),
  IN p_scope_ids    MEDIUMTEXT
)
BEGIN
  DECLARE v_count     INT DEFAULT 1;
  DECLARE v_pos       INT;
  DECLARE v_i         INT DEFAULT 0;
  DECLARE v_scope     VARCHAR(191);
  DECLARE v_found     INT;
  DECLARE v_seq       BIGINT;
  DECLARE v_dirty     BIGINT;
  DECLARE v_clean     BIGINT;
  DECLARE v_requested BIGINT;
  DECLARE v_handled   BIGINT;
  DECLARE v_scan      BIGINT;
  DECLARE v_seqs       MEDIUMTEXT DEFAULT '';
  DECLARE v_dirties    MEDIUMTEXT DEFAULT '';
  DECLARE v_cleans     MEDIUMTEXT DEFAULT '';
  DECLARE v_requesteds MEDIUMTEXT DEFAULT '';
  DECLARE v_handleds   MEDIUMTEXT DEFAULT '';
  DECLARE v_scans      MEDIUMTEXT DEFAULT '';
  DECLARE v_sep        VARCHAR(1) DEFAULT '';
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;

  IF p_scope_ids IS NULL OR p_scope_ids = '' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SET v_pos = LOCATE(',', p_scope_ids);
  WHILE v_pos > 0 AND v_count <= 1000 DO
    SET v_count = v_count + 1;
    SET v_pos = LOCATE(',', p_scope_ids, v_pos + 1);
  END WHILE;
  IF v_count > 1000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  WHILE v_i < v_count DO
    SET v_i = v_i + 1;
    SET v_scope = SUBSTRING_INDEX(SUBSTRING_INDEX(p_scope_ids, ',', v_i), ',', -1);
    IF v_scope = '' THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
    END IF;
    SET v_found = 1;
    SELECT pending_sequence, dirty_generation, clean_generation, requested_generation, handled_generation, last_auto_scan_generation
      INTO v_seq, v_dirty, v_clean, v_requested, v_handled, v_scan
      FROM pc_artifact_processing_intents
     WHERE binding_name = p_binding_name AND scope_id = v_scope;
    IF v_found = 1 THEN
      SET v_seqs = CONCAT(v_seqs, v_sep, v_seq);
      SET v_dirties = CONCAT(v_dirties, v_sep, v_dirty);
      SET v_cleans = CONCAT(v_cleans, v_sep, v_clean);
      SET v_requesteds = CONCAT(v_requesteds, v_sep, v_requested);
      SET v_handleds = CONCAT(v_handleds, v_sep, v_handled);
      SET v_scans = CONCAT(v_scans, v_sep, v_scan);
    ELSE
      SET v_seqs = CONCAT(v_seqs, v_sep);
      SET v_dirties = CONCAT(v_dirties, v_sep);
      SET v_cleans = CONCAT(v_cleans, v_sep);
      SET v_requesteds = CONCAT(v_requesteds, v_sep);
      SET v_handleds = CONCAT(v_handleds, v_sep);
      SET v_scans = CONCAT(v_scans, v_sep);
    END IF;
    SET v_sep = ',';
  END WHILE;

  SELECT v_seqs AS pending_sequences, v_dirties AS dirty_generations, v_cleans AS clean_generations,
         v_requesteds AS requested_generations, v_handleds AS handled_generations,
         v_scans AS last_auto_scan_generations, UTC_TIMESTAMP(3) AS db_now;
END
