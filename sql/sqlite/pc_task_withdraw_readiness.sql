-- Operation: pc_task_withdraw_readiness   (MySQL twin: procedures/oceanbase/pc_task_withdraw_readiness.sql; TypeScript: TaskStore.withdrawReadiness)
-- Purpose: a task worker that stops cleanly deletes its readiness fact (it no longer counts as
--   alive for the rest of its TTL).
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters: :worker_id
-- Result: one row (worker_id, withdrawn 0/1)
-- Errors (message): invalid_argument.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' WHERE :worker_id IS NULL OR :worker_id = '';
DELETE FROM pc_durable_task_workers WHERE worker_id = :worker_id;
SELECT :worker_id AS worker_id, changes() AS withdrawn;
COMMIT;
