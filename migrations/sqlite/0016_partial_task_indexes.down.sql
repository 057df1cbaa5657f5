-- Reverts 0016: the task state indexes of 0003 again, over every task.
DROP INDEX IF EXISTS ix_pc_dt_finished;
DROP INDEX IF EXISTS ix_pc_dt_running;
DROP INDEX IF EXISTS ix_pc_dt_pending;
CREATE INDEX ix_pc_dt_state ON pc_durable_tasks (state, task_id);
CREATE INDEX ix_pc_dt_lease ON pc_durable_tasks (state, lease_expires_at);
