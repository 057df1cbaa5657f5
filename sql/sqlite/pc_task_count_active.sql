-- Operation: pc_task_count_active   (MySQL twin: procedures/oceanbase/pc_task_count_active.sql; TypeScript: TaskStore.countActive)
-- Purpose: active tasks (pending, running) per state and task type for /metrics, reading at
--   most :cap rows of the pending and running indexes (ix_pc_dt_pending, ix_pc_dt_running:
--   one branch each, as a partial index serves only its own condition; the caller reports the
--   counts as capped when their sum reaches :cap). Terminal tasks are not counted here.
-- Transaction: none.
-- Parameters: :cap (1 .. 1000000)
-- Result: rows (state, task_type, n)
-- Errors: none (the cap is validated by the adapter).
SELECT d.state, d.task_type, COUNT(*) AS n
  FROM (SELECT state, task_type FROM pc_durable_tasks WHERE state = 'pending'
        UNION ALL
        SELECT state, task_type FROM pc_durable_tasks WHERE state = 'running'
        LIMIT :cap) AS d
 GROUP BY d.state, d.task_type;
