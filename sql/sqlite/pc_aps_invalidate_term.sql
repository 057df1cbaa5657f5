-- Operation: pc_aps_invalidate_term   (MySQL twin: procedures/oceanbase/pc_aps_invalidate_term.sql; TypeScript: Store.invalidateTerm)
-- Purpose: end a term for shutdown or mode switch: supervisor_generation + 1, holder_id and
--   expires_at cleared. With an expected holder and generation (shutdown) only that term is
--   invalidated; with both NULL (mode switch) the current term is invalidated whoever holds it,
--   and a key without a row gets one at generation 1. On SQLite this is the only way an old
--   permanent term ends besides a new start.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :supervisor_key
--   :expected_holder_id    NULL for an unconditional invalidation
--   :expected_generation   NULL for an unconditional invalidation
-- Result: one row (supervisor_key, holder_id=NULL, supervisor_generation (new), expires_at=NULL,
--   outcome='invalidated', db_now)
-- Errors (message):
--   term_lost         the expected term is not the current one.
--   invalid_argument  only one of holder and generation given, or empty key.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :supervisor_key IS NULL OR :supervisor_key = ''
    OR (:expected_holder_id IS NULL) <> (:expected_generation IS NULL);
INSERT INTO pc_aps_signals (code)
SELECT 'term_lost'
 WHERE :expected_holder_id IS NOT NULL
   AND NOT EXISTS (
     SELECT 1 FROM pc_artifact_processing_leases
      WHERE supervisor_key = :supervisor_key
        AND holder_id = :expected_holder_id
        AND supervisor_generation = :expected_generation);
INSERT INTO pc_artifact_processing_leases (supervisor_key, holder_id, supervisor_generation, expires_at, updated_at)
VALUES (:supervisor_key, NULL, 1, NULL, strftime('%Y-%m-%d %H:%M:%f', 'now'))
ON CONFLICT (supervisor_key) DO UPDATE
   SET holder_id = NULL,
       supervisor_generation = supervisor_generation + 1,
       expires_at = NULL,
       updated_at = excluded.updated_at;
SELECT supervisor_key, holder_id, supervisor_generation, expires_at, 'invalidated' AS outcome,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_artifact_processing_leases
 WHERE supervisor_key = :supervisor_key;
COMMIT;
