-- Operation: pc_aps_admit_scan_page   (SQLite twin: sql/sqlite/pc_aps_admit_scan_page.sql; TypeScript: Store.admitScanPage)
-- Purpose: fenced, set-based admission of one page of the scan in progress. Selects, in
--   pending_sequence order, up to p_page_limit keys of the binding with
--     dirty_generation > clean_generation (ordinary work),
--     p_after_sequence < pending_sequence <= scan_upper_pending_sequence,
--     last_auto_scan_generation < p_scan_generation (not yet admitted by this scan),
--     scope_id not in p_exclude_scope_ids (keys the caller holds ready, running or in retry-wait);
--   and for each of them, in ONE UPDATE statement: requested_generation + 1 where no request is
--   outstanding (requested = handled), the outstanding request reused otherwise, and the scan
--   mark last_auto_scan_generation = p_scan_generation recorded. Re-running any page of the same
--   scan generation (after a crash, from the first page) admits nothing twice: marked keys are
--   skipped. Excluded keys are not marked; the next scan considers them again.
--   The page's range is fixed first by a snapshot read of up to p_page_limit candidates (an index
--   range read on ix_pc_api_scan); the UPDATE then covers that pending_sequence range, re-checks
--   every condition on the locked rows and admits at most p_page_limit of them, in
--   pending_sequence order (ORDER BY pending_sequence LIMIT p_page_limit: the page is strictly
--   bounded even when keys of the range started qualifying after the snapshot read). When the
--   limit cut the range short, the cursor is the last admitted key, so the rest of the range is
--   admitted by the next page of the same scan. The admitted rows are identified by
--   last_auto_scan_page = the binding's page counter, which this call increments under the
--   binding-state row lock.
-- Transaction: owns its transaction, one per page; the caller's fence row (pc_aps_assert_term)
--   and the binding-state row are locked, then the admitted intent rows.
-- Parameters:
--   p_supervisor_key, p_holder_id, p_supervisor_generation   the caller's term
--   p_binding_name       VARCHAR(128)
--   p_scan_generation    BIGINT       the generation returned by pc_aps_begin_scan
--   p_after_sequence     BIGINT       cursor: 0 for the first page, then the largest
--                                     pending_sequence of the previous page
--   p_page_limit         INT          page size, 1 .. 5000
--   p_exclude_scope_ids  MEDIUMTEXT   comma-separated scope ids to skip, or NULL/''
--                                     (scope ids never contain commas)
-- Result: two result sets.
--   1. one row (next_after_sequence, exhausted): the page's cursor, i.e. the largest
--      pending_sequence among the page's candidates, or the last admitted key when the limit cut
--      the range short (NULL when there were no candidates: keep the cursor), and exhausted = 1
--      when fewer than p_page_limit candidates were left up to scan_upper_pending_sequence (call
--      pc_aps_finish_scan), 0 otherwise (continue with p_after_sequence = next_after_sequence).
--   2. the keys admitted by this call (scope_id, pending_sequence, requested_generation,
--      handled_generation, dirty_generation, clean_generation) in pending_sequence order, with
--      the requested generation they now owe. At most p_page_limit rows; a key that stopped
--      qualifying between selection and update is not admitted, one that started qualifying
--      inside the page's range may be.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   term_lost         the caller's term is not the live one.
--   scan_stale        no scan of generation p_scan_generation is in progress for the binding.
--   invalid_argument  limit out of range or negative cursor.
CREATE PROCEDURE pc_aps_admit_scan_page(
  IN p_supervisor_key        VARCHAR(191),
  IN p_holder_id             VARCHAR(128),
  IN p_supervisor_generation BIGINT,
  IN p_binding_name          VARCHAR(128),
  IN p_scan_generation       BIGINT,
  IN p_after_sequence        BIGINT,
  IN p_page_limit            INT,
  IN p_exclude_scope_ids     MEDIUMTEXT
)
BEGIN
  DECLARE v_found       INT DEFAULT 1;
  DECLARE v_now         DATETIME(3);
  DECLARE v_generation  BIGINT DEFAULT NULL;
  DECLARE v_in_progress INT DEFAULT 0;
  DECLARE v_upper       BIGINT DEFAULT NULL;
  DECLARE v_page        BIGINT DEFAULT 0;
  DECLARE v_exclude     MEDIUMTEXT DEFAULT NULL;
  DECLARE v_candidates  INT DEFAULT 0;
  DECLARE v_page_last   BIGINT DEFAULT NULL;
  DECLARE v_admitted    INT DEFAULT 0;
  DECLARE v_admitted_last BIGINT DEFAULT NULL;
  DECLARE v_exhausted   INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_page_limit IS NULL OR p_page_limit < 1 OR p_page_limit > 5000 OR p_after_sequence IS NULL OR p_after_sequence < 0
     OR p_scan_generation IS NULL OR p_scan_generation < 1 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  IF p_exclude_scope_ids IS NOT NULL AND p_exclude_scope_ids <> '' THEN
    SET v_exclude = p_exclude_scope_ids;
  END IF;

  START TRANSACTION;
  CALL pc_aps_assert_term(p_supervisor_key, p_holder_id, p_supervisor_generation);
  SET v_now = UTC_TIMESTAMP(3);

  SELECT scan_generation, scan_in_progress, scan_upper_pending_sequence, scan_page_counter
    INTO v_generation, v_in_progress, v_upper, v_page
    FROM pc_artifact_processing_binding_states
   WHERE binding_name = p_binding_name
     FOR UPDATE;
  IF v_found = 0 OR v_in_progress <> 1 OR v_generation <> p_scan_generation THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'scan_stale';
  END IF;

  SET v_page = v_page + 1;
  UPDATE pc_artifact_processing_binding_states
     SET scan_page_counter = v_page, updated_at = v_now
   WHERE binding_name = p_binding_name;

  -- The page: up to p_page_limit candidates after the cursor, in pending_sequence order.
  SELECT COUNT(*), MAX(c.pending_sequence)
    INTO v_candidates, v_page_last
    FROM (SELECT pending_sequence
            FROM pc_artifact_processing_intents
           WHERE binding_name = p_binding_name
             AND has_ordinary_work = 1
             AND pending_sequence > p_after_sequence
             AND pending_sequence <= v_upper
             AND last_auto_scan_generation < p_scan_generation
             AND (v_exclude IS NULL OR FIND_IN_SET(scope_id, v_exclude) = 0)
           ORDER BY pending_sequence
           LIMIT p_page_limit) c;

  SET v_exhausted = CASE WHEN v_candidates < p_page_limit THEN 1 ELSE 0 END;

  IF v_candidates > 0 THEN
    UPDATE pc_artifact_processing_intents
       SET requested_generation = CASE WHEN requested_generation > handled_generation
                                       THEN requested_generation
                                       ELSE requested_generation + 1 END,
           last_auto_scan_generation = p_scan_generation,
           last_auto_scan_page = v_page,
           updated_at = v_now
     WHERE binding_name = p_binding_name
       AND has_ordinary_work = 1
       AND pending_sequence > p_after_sequence
       AND pending_sequence <= v_page_last
       AND last_auto_scan_generation < p_scan_generation
       AND (v_exclude IS NULL OR FIND_IN_SET(scope_id, v_exclude) = 0)
     ORDER BY pending_sequence
     LIMIT p_page_limit;

    -- Counted from the rows (never from affected-row counts): did the limit cut the range short?
    SELECT COUNT(*), MAX(pending_sequence)
      INTO v_admitted, v_admitted_last
      FROM pc_artifact_processing_intents
     WHERE binding_name = p_binding_name
       AND has_ordinary_work = 1
       AND pending_sequence > p_after_sequence
       AND pending_sequence <= v_page_last
       AND last_auto_scan_generation = p_scan_generation
       AND last_auto_scan_page = v_page;
    IF v_admitted >= p_page_limit AND v_admitted_last < v_page_last THEN
      SET v_page_last = v_admitted_last;
      SET v_exhausted = 0;
    END IF;
  END IF;

  SELECT v_page_last AS next_after_sequence, v_exhausted AS exhausted;

  SELECT scope_id, pending_sequence, requested_generation, handled_generation,
         dirty_generation, clean_generation
    FROM pc_artifact_processing_intents
   WHERE binding_name = p_binding_name
     AND has_ordinary_work = 1
     AND pending_sequence > p_after_sequence
     AND pending_sequence <= COALESCE(v_page_last, p_after_sequence)
     AND last_auto_scan_generation = p_scan_generation
     AND last_auto_scan_page = v_page
   ORDER BY pending_sequence;
  COMMIT;
END
