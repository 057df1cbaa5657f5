-- Operation: pc_aps_refresh_candidate   (MySQL twin: procedures/oceanbase/pc_aps_refresh_candidate.sql; TypeScript: refreshCandidate)
-- Purpose: keeps a candidate's fingerprint rows live. On SQLite they never expire (the host lock
--   is the liveness), so this only reports them; the runtime does not call it on SQLite (no idle
--   polling, RFC 8).
-- Transaction: BEGIN IMMEDIATE ... COMMIT (a read only: nothing to extend).
-- Parameters:
--   :candidate_id
--   :ttl_ms        ignored on SQLite
-- Result: one row (live_keys, db_now).
-- Errors: none.
BEGIN IMMEDIATE;
SELECT COUNT(*) AS live_keys, strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_aps_candidate_fingerprints
 WHERE candidate_id = :candidate_id
   AND :ttl_ms IS NOT NULL;
COMMIT;
