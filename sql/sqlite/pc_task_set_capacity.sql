-- Operation: pc_task_set_capacity   (MySQL twin: procedures/oceanbase/pc_task_set_capacity.sql; TypeScript: TaskStore.setCapacity)
-- Purpose: the operator changes the database claim cap of durable tasks (ADR T6; 4 after
--   `migrate up`): the most tasks running at once across every process. Lowering it below the
--   running count stops claims until enough tasks end; no running task is interrupted.
-- Transaction: BEGIN IMMEDIATE ... COMMIT (serialized with every claim).
-- Parameters: :capacity (1 .. 10000)
-- Result: one row (previous_capacity, capacity, running)
-- Errors (message): invalid_argument, capacity_not_set.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' WHERE :capacity IS NULL OR :capacity < 1 OR :capacity > 10000 OR :capacity <> CAST(:capacity AS INTEGER);
INSERT INTO pc_aps_signals (code)
SELECT 'capacity_not_set' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_task_control WHERE name = 'claims');
SELECT capacity AS previous_capacity, CAST(:capacity AS INTEGER) AS capacity,
       (SELECT COUNT(*) FROM pc_durable_tasks WHERE state = 'running') AS running
  FROM pc_durable_task_control WHERE name = 'claims';
UPDATE pc_durable_task_control SET capacity = :capacity, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE name = 'claims';
COMMIT;
