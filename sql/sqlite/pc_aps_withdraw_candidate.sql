-- Operation: pc_aps_withdraw_candidate   (MySQL twin: procedures/oceanbase/pc_aps_withdraw_candidate.sql; TypeScript: withdrawCandidate)
-- Purpose: a candidate that stops (or was refused) removes its fingerprint rows (RFC 8, 10).
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :candidate_id
-- Result: one row (db_now).
-- Errors (message):
--   invalid_argument  missing id.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' WHERE :candidate_id IS NULL OR :candidate_id = '';
DELETE FROM pc_aps_candidate_fingerprints WHERE candidate_id = :candidate_id;
SELECT strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now;
COMMIT;
