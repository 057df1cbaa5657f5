-- Operation: pc_aps_switch_mode   (MySQL twin: procedures/oceanbase/pc_aps_switch_mode.sql; TypeScript: Store.switchMode)
-- Purpose: the database part of `apsup mode-switch` (RFC 9), in one transaction: refuse while a
--   candidate of the old mode holds an unexpired lease (expires_at set and in the future; a
--   permanent SQLite term, expires_at NULL, is the caller's check: the host lock), set
--   maintenance, invalidate every term of the old mode the database holds (switching to
--   dedicated: 'global'; to global: every 'artifact:%' key, also of a family no longer in any
--   families module, RFC 9 step 2; generation + 1, holder and expiry cleared), record the new
--   mode and clear maintenance. Requests, dirty marks, checkpoints and scans are untouched.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :to_mode   'global' or 'dedicated'; the old mode's keys follow from it
-- Result: two row sets: (mode, maintenance, db_now); then one row per invalidated key
--   (supervisor_key, holder_id=NULL, supervisor_generation (new), expires_at=NULL, outcome='invalidated').
-- Errors (message):
--   invalid_argument  unknown mode.
--   live_candidate    an old-mode key has a holder with an unexpired lease.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :to_mode IS NULL OR :to_mode NOT IN ('global', 'dedicated');
INSERT INTO pc_aps_signals (code)
SELECT 'live_candidate'
 WHERE EXISTS (
   SELECT 1 FROM pc_artifact_processing_leases
    WHERE (CASE WHEN :to_mode = 'dedicated' THEN supervisor_key = 'global' ELSE substr(supervisor_key, 1, 9) = 'artifact:' END)
      AND holder_id IS NOT NULL
      AND expires_at IS NOT NULL
      AND expires_at > strftime('%Y-%m-%d %H:%M:%f', 'now'));
UPDATE pc_artifact_processing_runtime
   SET maintenance = 1, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE runtime_id = 1;
UPDATE pc_artifact_processing_leases
   SET holder_id = NULL,
       supervisor_generation = supervisor_generation + 1,
       expires_at = NULL,
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE (CASE WHEN :to_mode = 'dedicated' THEN supervisor_key = 'global' ELSE substr(supervisor_key, 1, 9) = 'artifact:' END);
INSERT INTO pc_artifact_processing_runtime (runtime_id, mode, maintenance)
VALUES (1, :to_mode, 0)
ON CONFLICT (runtime_id) DO UPDATE
   SET mode = excluded.mode, maintenance = 0, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now');
SELECT mode, maintenance, strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_artifact_processing_runtime
 WHERE runtime_id = 1;
SELECT supervisor_key, holder_id, supervisor_generation, expires_at, 'invalidated' AS outcome,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_artifact_processing_leases
 WHERE (CASE WHEN :to_mode = 'dedicated' THEN supervisor_key = 'global' ELSE substr(supervisor_key, 1, 9) = 'artifact:' END)
 ORDER BY supervisor_key;
COMMIT;
