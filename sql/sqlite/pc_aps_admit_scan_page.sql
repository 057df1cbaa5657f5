-- Operation: pc_aps_admit_scan_page   (MySQL twin: procedures/oceanbase/pc_aps_admit_scan_page.sql; TypeScript: Store.admitScanPage)
-- Purpose: fenced, set-based admission of one page of the scan in progress: up to :page_limit
--   keys of the binding, in pending_sequence order, with dirty > clean,
--   :after_sequence < pending_sequence <= scan_upper_pending_sequence, not yet marked by this
--   scan generation and not excluded; in ONE statement each gets requested + 1 when no request is
--   outstanding (the outstanding one is reused otherwise) and the scan mark. Re-running any page
--   of the same scan generation admits nothing twice. Excluded keys are left unmarked.
-- Transaction: BEGIN IMMEDIATE ... COMMIT, one per page.
-- Parameters:
--   :supervisor_key, :holder_id, :supervisor_generation   the caller's term
--   :binding_name
--   :scan_generation     from pc_aps_begin_scan
--   :after_sequence      0 for the first page, then the largest pending_sequence returned
--   :page_limit          1 .. 5000
--   :exclude_scope_ids   comma-separated scope ids to skip, or NULL
-- Result: two result sets, as in the MySQL twin.
--   1. one row (next_after_sequence, exhausted): the largest pending_sequence of the page (NULL
--      when empty) and exhausted = 1 when fewer than :page_limit candidates were left.
--   2. the admitted keys (scope_id, pending_sequence, requested_generation, handled_generation,
--      dirty_generation, clean_generation); the runner orders them by pending_sequence.
--   The write lock is held from BEGIN IMMEDIATE, so the page computed by the first SELECT is
--   exactly the set the UPDATE admits.
-- Errors (message):
--   term_lost, scan_stale, invalid_argument (as in the MySQL twin).
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :page_limit IS NULL OR :page_limit < 1 OR :page_limit > 5000
    OR :after_sequence IS NULL OR :after_sequence < 0
    OR :scan_generation IS NULL OR :scan_generation < 1;
-- @include pc_aps_assert_term
INSERT INTO pc_aps_signals (code)
SELECT 'scan_stale'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_artifact_processing_binding_states
    WHERE binding_name = :binding_name
      AND scan_in_progress = 1
      AND scan_generation = :scan_generation);
UPDATE pc_artifact_processing_binding_states
   SET scan_page_counter = scan_page_counter + 1
 WHERE binding_name = :binding_name;
SELECT MAX(pending_sequence) AS next_after_sequence,
       CASE WHEN COUNT(*) < :page_limit THEN 1 ELSE 0 END AS exhausted
  FROM (SELECT pending_sequence
          FROM pc_artifact_processing_intents
         WHERE binding_name = :binding_name
           AND dirty_generation > clean_generation
           AND pending_sequence > :after_sequence
           AND pending_sequence <= (SELECT scan_upper_pending_sequence FROM pc_artifact_processing_binding_states
                                     WHERE binding_name = :binding_name)
           AND last_auto_scan_generation < :scan_generation
           AND (:exclude_scope_ids IS NULL
                OR instr(',' || :exclude_scope_ids || ',', ',' || scope_id || ',') = 0)
         ORDER BY pending_sequence
         LIMIT :page_limit);
UPDATE pc_artifact_processing_intents
   SET requested_generation = CASE WHEN requested_generation > handled_generation
                                   THEN requested_generation
                                   ELSE requested_generation + 1 END,
       last_auto_scan_generation = :scan_generation,
       last_auto_scan_page = (SELECT scan_page_counter FROM pc_artifact_processing_binding_states
                               WHERE binding_name = :binding_name),
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE pending_sequence IN (
   SELECT pending_sequence
     FROM pc_artifact_processing_intents
    WHERE binding_name = :binding_name
      AND dirty_generation > clean_generation
      AND pending_sequence > :after_sequence
      AND pending_sequence <= (SELECT scan_upper_pending_sequence FROM pc_artifact_processing_binding_states
                                WHERE binding_name = :binding_name)
      AND last_auto_scan_generation < :scan_generation
      AND (:exclude_scope_ids IS NULL
           OR instr(',' || :exclude_scope_ids || ',', ',' || scope_id || ',') = 0)
    ORDER BY pending_sequence
    LIMIT :page_limit)
RETURNING scope_id, pending_sequence, requested_generation, handled_generation,
          dirty_generation, clean_generation;
COMMIT;
