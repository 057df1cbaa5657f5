-- Operation: pc_task_prune   (MySQL twin: procedures/oceanbase/pc_task_prune.sql; TypeScript: TaskStore.prune)
-- Purpose: delete up to :page_limit terminal tasks finished before :finished_before, oldest
--   finish first (through ix_pc_dt_finished, migration 0016).
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters: :finished_before ('YYYY-MM-DD HH:MM:SS.SSS' UTC), :page_limit (1 .. 10000)
-- Result: one row (deleted)
-- Errors (message): invalid_argument.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' WHERE :finished_before IS NULL OR :page_limit IS NULL OR :page_limit < 1 OR :page_limit > 10000;
DELETE FROM pc_durable_tasks
 WHERE task_id IN (SELECT task_id FROM pc_durable_tasks
                    WHERE state IN ('succeeded', 'failed', 'cancelled') AND finished_at < :finished_before
                    ORDER BY finished_at LIMIT :page_limit);
SELECT changes() AS deleted;
COMMIT;
