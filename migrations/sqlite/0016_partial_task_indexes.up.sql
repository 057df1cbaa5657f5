-- Migration 0016 (SQLite): each task state index holds only the rows its reads look for (issue 12).
-- ix_pc_dt_state (state, task_id) and ix_pc_dt_lease (state, lease_expires_at) held every task,
-- so each claim and each success also rewrote a leaf of the terminal rows' part of both. SQLite
-- uses a partial index for a query whose WHERE holds the index's condition as written:
--   ix_pc_dt_pending   claims and the wake-up probe ("state = 'pending'", oldest task id first)
--   ix_pc_dt_running   the running count under the cap and the lost attempts ("state = 'running'",
--                      by lease expiry)
--   ix_pc_dt_finished  prune ("state IN ('succeeded', 'failed', 'cancelled')", oldest finish first)
-- WAL frames a group commit writes (2 successes that claim 2 tasks, 1,000 commits): 10.6 -> 7.7.
-- The MySQL/OceanBase schema keeps its two indexes (no partial indexes there).
DROP INDEX IF EXISTS ix_pc_dt_state;
DROP INDEX IF EXISTS ix_pc_dt_lease;
CREATE INDEX ix_pc_dt_pending ON pc_durable_tasks (task_id) WHERE state = 'pending';
CREATE INDEX ix_pc_dt_running ON pc_durable_tasks (lease_expires_at) WHERE state = 'running';
CREATE INDEX ix_pc_dt_finished ON pc_durable_tasks (finished_at) WHERE state IN ('succeeded', 'failed', 'cancelled');
