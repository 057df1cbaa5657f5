-- Migration 0017 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): the durable task claim cap is
-- a fact of the database (ADR T6): pc_durable_task_control gets a capacity column, 4 on the
-- 'claims' row every claim locks; only pc_task_set_capacity (`apsup tasks set-capacity <n>`)
-- changes it. Reinstalls pc_task_claim (reads the cap under the claims row lock instead of taking
-- it from the caller, and claims only the task types the worker's registry knows) and
-- pc_task_probe_pending (the same type list; false while the cap is reached); installs
-- pc_task_set_capacity. Irreversible by design (no down file): the previous procedure versions
-- are not kept.
ALTER TABLE pc_durable_task_control ADD COLUMN capacity INT NULL;
UPDATE pc_durable_task_control SET capacity = 4 WHERE name = 'claims';
-- @procedure pc_task_claim sha256=160f8292416b529124a6b8381f01bb8f7dcce54c28c36b2680d1b5331dd4c452
-- @procedure pc_task_probe_pending sha256=78e7dcf44fe6f2d7333ccc36aa40c5bb63b8c4be2d237f6f8aebea8546ef4fba
-- @procedure pc_task_set_capacity sha256=ddb25d937d3ac0335a55bf4f0ce5a81d0eac324b666b8bfe36fa57bc753a982e
