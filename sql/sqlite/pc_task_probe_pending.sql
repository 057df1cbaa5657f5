-- Operation: pc_task_probe_pending   (MySQL twin: procedures/oceanbase/pc_task_probe_pending.sql; TypeScript: TaskStore.hasPending)
-- Purpose: the wake-up probe of a task worker with free local capacity (after a foreign commit,
--   and in the sweep): whether a claim could take something now, i.e. a task of a type the
--   worker knows is pending, the running count is below the database cap (ADR T6) and the
--   maintenance window is off.
-- Transaction: none.
-- Parameters: :task_types (comma-separated)
-- Result: one row (pending 0/1)
-- Errors: none.
SELECT (EXISTS (SELECT 1 FROM pc_durable_tasks
                 WHERE state = 'pending' AND instr(',' || :task_types || ',', ',' || task_type || ',') > 0)
        AND (SELECT COUNT(*) FROM pc_durable_tasks WHERE state = 'running')
            < COALESCE((SELECT capacity FROM pc_durable_task_control WHERE name = 'claims'), 0)
        AND NOT EXISTS (SELECT 1 FROM pc_artifact_processing_runtime WHERE runtime_id = 1 AND maintenance = 1)) AS pending;
