-- Operation: pc_task_cancel   (MySQL twin: procedures/oceanbase/pc_task_cancel.sql; TypeScript: TaskStore.cancel)
-- Purpose: user cancel: pending -> cancelled at once; running -> cancel_requested = 1 (ends after
--   the handler's cleanup point); terminal -> unchanged.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters: :task_id
-- Result: one row (task_id, state, cancel_requested, outcome 'cancelled' | 'cancel_requested' | 'already_terminal')
-- Errors (message): task_not_found.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
UPDATE pc_durable_tasks SET cancel_requested = 1, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = :task_id AND state = 'running';
-- Last write before the result: changes() tells whether a pending task was cancelled now.
UPDATE pc_durable_tasks
   SET state = 'cancelled', cancel_requested = 1, error_code = 'cancelled', finished_at = strftime('%Y-%m-%d %H:%M:%f', 'now'), updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = :task_id AND state = 'pending';
SELECT task_id, state, cancel_requested,
       CASE WHEN changes() > 0 THEN 'cancelled' WHEN state = 'running' THEN 'cancel_requested' ELSE 'already_terminal' END AS outcome
  FROM pc_durable_tasks WHERE task_id = :task_id;
COMMIT;
