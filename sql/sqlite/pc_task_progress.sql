-- Operation: pc_task_progress   (MySQL twin: procedures/oceanbase/pc_task_progress.sql; TypeScript: TaskStore.progress)
-- Purpose: fenced progress, throttled by numeric increments (written when the number advanced by
--   at least :min_step or reached the total); a new message is always persisted. Returns
--   cancel_requested (a control point).
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters: :task_id, :attempt_token, :current (NULL), :total (NULL), :message (NULL), :min_step (>= 0)
-- Result: one row (task_id, persisted 0/1, progress_current, progress_total, progress_message, cancel_requested)
-- Errors (message): task_not_found, attempt_lost, invalid_argument.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code) SELECT 'invalid_argument' WHERE :min_step IS NULL OR :min_step < 0;
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
INSERT INTO pc_aps_signals (code)
SELECT 'attempt_lost'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_durable_task_live_attempts
    WHERE task_id = :task_id AND attempt_token = :attempt_token);
UPDATE pc_durable_tasks
   SET progress_current = COALESCE(:current, progress_current),
       progress_total = COALESCE(:total, progress_total),
       progress_message = COALESCE(:message, progress_message),
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = :task_id
   AND ((:message IS NOT NULL AND (progress_message IS NULL OR progress_message <> :message))
        OR (:current IS NOT NULL AND (progress_current IS NULL OR :current - progress_current >= :min_step
                                      OR (:total IS NOT NULL AND :current >= :total AND :current <> progress_current))));
SELECT task_id, CASE WHEN changes() > 0 THEN 1 ELSE 0 END AS persisted, progress_current, progress_total,
       progress_message, cancel_requested
  FROM pc_durable_tasks WHERE task_id = :task_id;
COMMIT;
