-- Migration 0017 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): the durable task claim cap is
-- a fact of the database (ADR T6): pc_durable_task_control gets a capacity column, 4 on the
-- 'claims' row every claim locks; only pc_task_set_capacity (`apsup tasks set-capacity <n>`)
-- changes it. Reinstalls pc_task_claim (reads the cap under the claims row lock instead of taking
-- it from the caller, and claims only the task types the worker's registry knows) and
-- pc_task_probe_pending (the same type list; false while the cap is reached); both claim
-- nothing while the maintenance window is on (running attempts are not affected); installs
-- pc_task_set_capacity. Irreversible by design (no down file): the previous procedure versions
-- are not kept.
ALTER TABLE pc_durable_task_control ADD COLUMN capacity INT NULL;
UPDATE pc_durable_task_control SET capacity = 4 WHERE name = 'claims';
-- @procedure pc_task_claim sha256=54985f28d23de46e34b0d06f80c1973604f9fd9ac1d95523a187335dd72b90f8
-- @procedure pc_task_probe_pending sha256=38d2d9e5b4e37fc3c39029efb23e36b7416539219b972c1ba16c375487d04243
-- @procedure pc_task_set_capacity sha256=ddb25d937d3ac0335a55bf4f0ce5a81d0eac324b666b8bfe36fa57bc753a982e
