-- Operation: pc_aps_set_maintenance   (MySQL twin: procedures/oceanbase/pc_aps_set_maintenance.sql; TypeScript: Store.setMaintenance)
-- Purpose: turn the deployment's maintenance window on or off (RFC 9, step 1 and 3 of a mode
--   switch; also any storage maintenance). While it is on, domain writes (pc_aps_mark_dirty) and
--   explicit triggers (pc_aps_accept_request) are refused with 'maintenance' and runtime starts
--   are refused (pc_aps_claim_runtime_mode); a running supervisor's own control writes are not
--   affected (stop the old candidates as part of the window). pc_aps_switch_mode ends it.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :maintenance   1 (on) or 0 (off)
-- Result: one row (mode, maintenance, changed (1 when the flag changed), db_now).
-- Errors (message):
--   invalid_argument  maintenance is not 0 or 1.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' WHERE :maintenance IS NULL OR :maintenance NOT IN (0, 1);
UPDATE pc_artifact_processing_runtime
   SET maintenance = :maintenance, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE runtime_id = 1 AND maintenance <> :maintenance;
SELECT mode, maintenance, changes() AS changed, strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_artifact_processing_runtime
 WHERE runtime_id = 1;
COMMIT;
