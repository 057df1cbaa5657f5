-- Migration 0018 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): the durable task claim cap is
-- a fact of the database (ADR T6): pc_durable_task_control gets a capacity column, 4 on the
-- 'claims' row every claim locks; only pc_task_set_capacity (`apsup tasks set-capacity <n>`)
-- changes it. Reinstalls pc_task_claim (reads the cap under the claims row lock instead of taking
-- it from the caller, and claims only the task types the worker's registry knows) and
-- pc_task_probe_pending (the same type list; false while the cap is reached); both claim
-- nothing while the maintenance window is on (running attempts are not affected) and
-- pc_task_list_lost (only lost attempts of the worker's types: their failure hooks are its); installs
-- pc_task_set_capacity.
-- The upgrade path of the reference domains (ADR: knowledge schema v2): pc_business_schema_versions
-- records each business schema's version; a database reaching this migration has none recorded
-- (an unversioned baseline: 0006 created ref_files with the task/attempt owner columns, the v2
-- shape). The knowledge 1 -> 2 step converts, once, the file rows left in an intermediate state
-- that no attempt can own (no task, or a task that is no longer pending/running): 'parsing' ->
-- 'parse_error', 'indexing' -> 'error' (the state the index-file failure hooks use); rows of an
-- active task are left to it (its attempt or its failure hook converges them). Then knowledge
-- version 2 is recorded. Run it with the workers stopped (the maintenance window).
-- Irreversible by design (no down file): the previous procedure versions are not kept and the
-- converted rows cannot be told apart from others.
ALTER TABLE pc_durable_task_control ADD COLUMN capacity INT NULL;
UPDATE pc_durable_task_control SET capacity = 4 WHERE name = 'claims';
CREATE TABLE pc_business_schema_versions (
  schema_name VARCHAR(64) NOT NULL PRIMARY KEY,
  version     INT         NOT NULL,
  recorded_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
UPDATE ref_files
   SET state = 'parse_error', error = 'knowledge 1->2 upgrade: parsing was interrupted and no task attempt owns the file'
 WHERE state = 'parsing'
   AND (task_id IS NULL OR NOT EXISTS (SELECT 1 FROM pc_durable_tasks t WHERE t.task_id = ref_files.task_id AND t.state IN ('pending', 'running')));
UPDATE ref_files
   SET state = 'error', error = 'knowledge 1->2 upgrade: indexing was interrupted and no task attempt owns the file'
 WHERE state = 'indexing'
   AND (task_id IS NULL OR NOT EXISTS (SELECT 1 FROM pc_durable_tasks t WHERE t.task_id = ref_files.task_id AND t.state IN ('pending', 'running')));
INSERT INTO pc_business_schema_versions (schema_name, version, recorded_at) VALUES ('knowledge', 2, UTC_TIMESTAMP(3));
-- @procedure pc_task_claim sha256=54985f28d23de46e34b0d06f80c1973604f9fd9ac1d95523a187335dd72b90f8
-- @procedure pc_task_probe_pending sha256=38d2d9e5b4e37fc3c39029efb23e36b7416539219b972c1ba16c375487d04243
-- @procedure pc_task_list_lost sha256=95d913dad0eb71070e4059ae7a5abf421b8ca33face4ec8276b664b713b8ccda
-- @procedure pc_task_set_capacity sha256=ddb25d937d3ac0335a55bf4f0ce5a81d0eac324b666b8bfe36fa57bc753a982e
