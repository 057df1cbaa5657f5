-- Migration 0028 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): the running count of durable
-- tasks is kept on the 'claims' row (issue 12).
--
-- Every claim counted the running tasks under the claims row lock; on InnoDB that count walks
-- the state index, which keeps an entry for every task that left 'running' until purge removes
-- it (hundreds under a steady flow: most of a claim's cost). pc_durable_task_control gets a
-- `running` column, kept exact by two triggers of pc_durable_tasks: a row moving into or out of
-- 'running' (an update or a delete; any writer, a procedure or a DBA's statement) adds or
-- subtracts one on the 'claims' row, taking its lock, so the count a claim reads under that lock
-- is the committed truth (ADR T6). A write that does not change whether the row is running
-- (a heartbeat, progress, a pending task cancelled) touches no row of the control table and never
-- waits for the claims lock (COMPATIBILITY row 120). No insert trigger: every task is inserted
-- 'pending' and becomes running by a claim; a row inserted as 'running' by hand is not counted
-- until `apsup tasks set-capacity` recounts (a trigger per inserted row cost batched submits a
-- fifth of their speed).
-- The count is filled under the claims row lock after the triggers exist: a move not yet
-- committed either holds that lock (the count waits for it) or has not counted itself yet.
-- pc_aps_task_claim_rows (changed): reads capacity and running from the locked row.
-- pc_task_probe_pending (changed): compares the row's running count with its capacity.
-- pc_task_set_capacity (changed): recounts the running tasks under the lock and stores the count
-- (repairs a count changed by hand; `apsup tasks set-capacity <n>`).
-- pc_task_claim_batch: header only.
-- pc_task_submit_batch and pc_aps_intake_batch (changed): the UTF-8 check of each item compares
-- with <=> (a server that turns invalid UTF-8 into NULL in CONVERT, MySQL 8.0.28+, made the
-- comparison NULL and let the item through to a later error); same results on MariaDB.
-- Irreversible by design (no down file): the previous procedure texts are not kept.
ALTER TABLE pc_durable_task_control ADD COLUMN running INT NOT NULL DEFAULT 0;
DROP TRIGGER IF EXISTS pc_dt_running_update;
DROP TRIGGER IF EXISTS pc_dt_running_delete;
-- One statement each (no BEGIN ... END): the WHERE names no row unless the running state changes.
CREATE TRIGGER pc_dt_running_update AFTER UPDATE ON pc_durable_tasks FOR EACH ROW
  UPDATE pc_durable_task_control
     SET running = running + IF(NEW.state = 'running', 1, -1)
   WHERE name = IF((OLD.state = 'running') <> (NEW.state = 'running'), 'claims', '');
CREATE TRIGGER pc_dt_running_delete AFTER DELETE ON pc_durable_tasks FOR EACH ROW
  UPDATE pc_durable_task_control SET running = running - 1
   WHERE name = IF(OLD.state = 'running', 'claims', '');
START TRANSACTION;
SELECT capacity FROM pc_durable_task_control WHERE name = 'claims' FOR UPDATE;
UPDATE pc_durable_task_control
   SET running = (SELECT COUNT(*) FROM pc_durable_tasks WHERE state = 'running')
 WHERE name = 'claims';
COMMIT;
-- @procedure pc_aps_task_claim_rows sha256=fe2975655403508bf6ca60b683eecbae18252d76c65de03e9acf06e735c8f623
-- @procedure pc_task_claim_batch sha256=8a3e8d3d1f563330d3798b2a3fbdd8aabd22b85aaa9cd4b5bc1d8a765f3d7c10
-- @procedure pc_task_probe_pending sha256=926f488897c37e4834c6b74ef26f65b57215daa658bdf4ed4d3a073995fcba96
-- @procedure pc_task_set_capacity sha256=02e1934568f2b402bf775fafe65e8ef8b19235e488ff22ff592132f08926b064
-- @procedure pc_task_submit_batch sha256=91236f4c5144394f0e33b49911fa7e583ded7cc4f0df7172e07b3182b831c274
-- @procedure pc_aps_intake_batch sha256=44317c113c1c35cc3498cf29248d39de95eb26e6b06630025c423135739878b1
