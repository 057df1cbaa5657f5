-- Operation: pc_aps_renew_term   (MySQL twin: procedures/oceanbase/pc_aps_renew_term.sql; TypeScript: Store.renewTerm)
-- Purpose: on SQLite a term never expires, so renewal only confirms, under the write lock, that
--   the caller still holds the term (holder and generation); expires_at stays NULL.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :supervisor_key, :holder_id, :supervisor_generation   the caller's term
--   :ttl_ms   accepted for a uniform signature; ignored on SQLite
-- Result: one row (supervisor_key, holder_id, supervisor_generation, expires_at=NULL,
--   outcome='renewed', db_now)
-- Errors (message):
--   term_lost  the caller no longer holds the term.
BEGIN IMMEDIATE;
-- @include pc_aps_assert_term
UPDATE pc_artifact_processing_leases
   SET renewed_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE supervisor_key = :supervisor_key;
SELECT supervisor_key, holder_id, supervisor_generation, expires_at, 'renewed' AS outcome,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_artifact_processing_leases
 WHERE supervisor_key = :supervisor_key;
COMMIT;
