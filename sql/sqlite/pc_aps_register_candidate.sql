-- Operation: pc_aps_register_candidate   (MySQL twin: procedures/oceanbase/pc_aps_register_candidate.sql; TypeScript: registerCandidate)
-- Purpose: a runtime start records, per supervisor key, the fingerprint of what it runs with
--   (RFC 8, 10). SQLite runs one host process (its caller holds the host lock), so no other
--   candidate is live: the rows other candidates of the key left (a stopped or crashed host)
--   are replaced, and the outcome is always 'registered'. Rows never expire (expires_at NULL).
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :supervisor_key, :candidate_id, :role ('all' on SQLite), :shared_sha256, :shared_text,
--   :execution_sha256, :execution_text (NULL for the api role), :ttl_ms (ignored on SQLite)
-- Result: one row (outcome='registered', candidate_id, role, shared_text, execution_text, db_now).
-- Errors (message):
--   invalid_argument  a missing key, id or fingerprint, an unknown role, an execution
--                     fingerprint given for the api role or missing for another.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :supervisor_key IS NULL OR :supervisor_key = '' OR :candidate_id IS NULL OR :candidate_id = ''
    OR :role IS NULL OR :role NOT IN ('all', 'api', 'background')
    OR :shared_sha256 IS NULL OR length(:shared_sha256) <> 64 OR :shared_text IS NULL
    OR (:role = 'api' AND (:execution_sha256 IS NOT NULL OR :execution_text IS NOT NULL))
    OR (:role <> 'api' AND (:execution_sha256 IS NULL OR length(:execution_sha256) <> 64 OR :execution_text IS NULL));
DELETE FROM pc_aps_candidate_fingerprints
 WHERE supervisor_key = :supervisor_key AND candidate_id <> :candidate_id;
INSERT INTO pc_aps_candidate_fingerprints
  (supervisor_key, candidate_id, role, shared_sha256, shared_text, execution_sha256, execution_text, registered_at, expires_at)
VALUES
  (:supervisor_key, :candidate_id, :role, :shared_sha256, :shared_text, :execution_sha256, :execution_text,
   strftime('%Y-%m-%d %H:%M:%f', 'now'), NULL)
ON CONFLICT (supervisor_key, candidate_id) DO UPDATE
   SET role = excluded.role, shared_sha256 = excluded.shared_sha256, shared_text = excluded.shared_text,
       execution_sha256 = excluded.execution_sha256, execution_text = excluded.execution_text;
SELECT 'registered' AS outcome, :candidate_id AS candidate_id, :role AS role, :shared_text AS shared_text,
       :execution_text AS execution_text, strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now;
COMMIT;
