-- Operation: pc_task_read_capacity   (MySQL twin: procedures/oceanbase/pc_task_read_capacity.sql; TypeScript: TaskStore.readCapacity)
-- Purpose: the database claim cap of durable tasks (ADR T6) and how much of it is in use, for the
--   web console (`apsup tasks set-capacity` changes the cap).
-- Transaction: none (one read; the running count is bounded by the cap in steady state).
-- Parameters: none.
-- Result: one row (capacity, running, db_now); no row on a database without the 'claims' row.
-- Errors: none.
SELECT c.capacity AS capacity,
       (SELECT COUNT(*) FROM pc_durable_tasks WHERE state = 'running') AS running,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_durable_task_control c WHERE c.name = 'claims';
