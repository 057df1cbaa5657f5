-- Operation: pc_aps_assert_term   (MySQL twin: procedures/oceanbase/pc_aps_assert_term.sql; TypeScript: Store.assertTerm)
-- Purpose: fencing check for any business or control write: validates holder and generation
--   (and expiry, NULL on SQLite) of the lease row. It is itself a write statement, so inside
--   the caller's BEGIN IMMEDIATE transaction the database write lock is held from before the
--   check until the caller commits: no takeover can commit in between.
-- Transaction: runs INSIDE the caller's transaction, which must be BEGIN IMMEDIATE.
-- Parameters:
--   :supervisor_key         'global' or 'artifact:<family>'
--   :holder_id              holder of the term the caller claims
--   :supervisor_generation  generation of the term the caller claims
-- Result: none.
-- Errors (SQLITE_CONSTRAINT_TRIGGER, message):
--   term_lost  missing row, other holder, other generation, released or expired.
INSERT INTO pc_aps_signals (code)
SELECT 'term_lost'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_artifact_processing_live_terms
    WHERE supervisor_key = :supervisor_key AND holder_id = :holder_id
      AND supervisor_generation = :supervisor_generation);
