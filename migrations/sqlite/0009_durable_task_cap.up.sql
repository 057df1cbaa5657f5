-- Migration 0009 (SQLite): the durable task claim cap is a fact of the database (ADR T6), as
-- migrations/oceanbase/0017: pc_durable_task_control gets a capacity column, 4 on the 'claims'
-- row; only sql/sqlite/pc_task_set_capacity.sql (`apsup tasks set-capacity <n>`) changes it.
-- The claim and the probe read it inside their statements (sql/sqlite/pc_task_claim.sql).
ALTER TABLE pc_durable_task_control ADD COLUMN capacity INTEGER NULL;
UPDATE pc_durable_task_control SET capacity = 4 WHERE name = 'claims';
