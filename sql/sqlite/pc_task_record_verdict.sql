-- Operation: pc_task_record_verdict   (MySQL twin: procedures/oceanbase/pc_task_record_verdict.sql; TypeScript: TaskStore.recordVerdict)
-- Purpose: the runner records the verdict it reached for a running attempt (:verdict 'timeout' or
--   'interrupted_by_shutdown') before it stops the attempt's worker, so that the verdict, not the
--   lease, decides how the attempt ends (pc_task_end_attempt, pc_task_expire_lost of any runner);
--   a 'timeout' is never requeued and pc_task_complete refuses a success after it. Fenced by the
--   attempt token only: an expired lease cannot be renewed, so while the row runs under this
--   token nobody else ended it (see the MySQL twin). The first verdict wins ('kept'); a cancel
--   recorded before it wins too ('cancel_first', nothing recorded).
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters: :task_id, :attempt_token, :verdict
-- Result: one row (task_id, stop_verdict, outcome 'recorded' | 'kept' | 'cancel_first')
-- Errors (message): task_not_found, attempt_lost, invalid_argument.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' WHERE :verdict IS NULL OR :verdict NOT IN ('timeout', 'interrupted_by_shutdown');
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
INSERT INTO pc_aps_signals (code)
SELECT 'attempt_lost'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_durable_tasks
    WHERE task_id = :task_id AND state = 'running' AND attempt_token = :attempt_token);
UPDATE pc_durable_tasks
   SET stop_verdict = :verdict, updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = :task_id AND stop_verdict IS NULL AND cancel_requested = 0;
SELECT task_id, stop_verdict,
       CASE WHEN changes() > 0 THEN 'recorded' WHEN stop_verdict IS NOT NULL THEN 'kept' ELSE 'cancel_first' END AS outcome
  FROM pc_durable_tasks WHERE task_id = :task_id;
COMMIT;
