-- Migration 0010 (SQLite): the durable task claim cap is a fact of the database (ADR T6), as
-- migrations/oceanbase/0018: pc_durable_task_control gets a capacity column, 4 on the 'claims'
-- row; only sql/sqlite/pc_task_set_capacity.sql (`apsup tasks set-capacity <n>`) changes it.
-- The claim and the probe read it inside their statements (sql/sqlite/pc_task_claim.sql).
-- The upgrade path of the reference domains, as migrations/oceanbase/0018: the business schema
-- versions table, the one-time knowledge 1 -> 2 conversion of file rows in 'parsing'/'indexing'
-- that no attempt can own ('parse_error' / 'error'), then knowledge version 2 recorded; all in
-- this migration's transaction.
ALTER TABLE pc_durable_task_control ADD COLUMN capacity INTEGER NULL;
UPDATE pc_durable_task_control SET capacity = 4 WHERE name = 'claims';
CREATE TABLE pc_business_schema_versions (
  schema_name TEXT    NOT NULL PRIMARY KEY,
  version     INTEGER NOT NULL,
  recorded_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
UPDATE ref_files
   SET state = 'parse_error', error = 'knowledge 1->2 upgrade: parsing was interrupted and no task attempt owns the file'
 WHERE state = 'parsing'
   AND (task_id IS NULL OR NOT EXISTS (SELECT 1 FROM pc_durable_tasks t WHERE t.task_id = ref_files.task_id AND t.state IN ('pending', 'running')));
UPDATE ref_files
   SET state = 'error', error = 'knowledge 1->2 upgrade: indexing was interrupted and no task attempt owns the file'
 WHERE state = 'indexing'
   AND (task_id IS NULL OR NOT EXISTS (SELECT 1 FROM pc_durable_tasks t WHERE t.task_id = ref_files.task_id AND t.state IN ('pending', 'running')));
INSERT INTO pc_business_schema_versions (schema_name, version) VALUES ('knowledge', 2);
