-- Operation: pc_task_succeed   (MySQL twin: procedures/oceanbase/pc_task_succeed.sql; TypeScript: TaskStore.succeed)
-- Purpose: pc_task_complete in its own transaction, for an attempt whose handler registered no
--   ctx.onComplete writes: the statements of sql/sqlite/pc_task_complete.sql (included below by
--   the script loader, not copied) inside a transaction this script owns. Same rules and result.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters: :task_id, :attempt_token, :result (JSON, NULL)
-- Result: one row (task_id, state='succeeded', attempt_count, finished_at)
-- Errors (message): task_not_found, attempt_lost, cancel_requested; nothing is written when one is raised.
BEGIN IMMEDIATE;
-- @include pc_task_complete
COMMIT;
