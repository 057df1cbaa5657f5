-- Operation: pc_task_delete   (MySQL twin: procedures/oceanbase/pc_task_delete.sql; TypeScript: TaskStore.delete)
-- Purpose: delete one terminal task; active tasks are refused.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters: :task_id
-- Result: one row (task_id, deleted = 1)
-- Errors (message): task_not_found, task_active.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
INSERT INTO pc_aps_signals (code)
SELECT 'task_active' FROM pc_durable_tasks WHERE task_id = :task_id AND state IN ('pending', 'running');
DELETE FROM pc_durable_tasks WHERE task_id = :task_id;
SELECT :task_id AS task_id, 1 AS deleted;
COMMIT;
