-- Operation: pc_aps_acquire_term   (MySQL twin: procedures/oceanbase/pc_aps_acquire_term.sql; TypeScript: Store.acquireTerm)
-- Purpose: SQLite semantics of a legitimate start: the single runtime host takes the term of a
--   supervisor key unconditionally, supervisor_generation is incremented (so every worker of any
--   earlier term, including an earlier run of the same holder, is fenced out) and expires_at is
--   NULL: there is no election, lease expiry or renewal on SQLite.
-- Transaction: BEGIN IMMEDIATE ... COMMIT (the write lock serializes takeovers).
-- Parameters:
--   :supervisor_key  'global' or 'artifact:<family>'
--   :holder_id       random id of the runtime host process
--   :ttl_ms          accepted for a uniform signature; ignored on SQLite
-- Result: one row (supervisor_key, holder_id, supervisor_generation, expires_at=NULL,
--   outcome='acquired', db_now)
-- Errors (message):
--   invalid_argument  empty key or holder.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :supervisor_key IS NULL OR :supervisor_key = '' OR :holder_id IS NULL OR :holder_id = '';
INSERT INTO pc_artifact_processing_leases
       (supervisor_key, holder_id, supervisor_generation, expires_at, acquired_at, renewed_at, updated_at)
VALUES (:supervisor_key, :holder_id, 1, NULL,
        strftime('%Y-%m-%d %H:%M:%f', 'now'), strftime('%Y-%m-%d %H:%M:%f', 'now'),
        strftime('%Y-%m-%d %H:%M:%f', 'now'))
ON CONFLICT (supervisor_key) DO UPDATE
   SET holder_id = excluded.holder_id,
       supervisor_generation = supervisor_generation + 1,
       expires_at = NULL,
       acquired_at = excluded.acquired_at,
       renewed_at = excluded.renewed_at,
       updated_at = excluded.updated_at;
SELECT supervisor_key, holder_id, supervisor_generation, expires_at, 'acquired' AS outcome,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_artifact_processing_leases
 WHERE supervisor_key = :supervisor_key;
COMMIT;
