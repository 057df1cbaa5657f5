-- Operation: pc_task_heartbeat   (MySQL twin: procedures/oceanbase/pc_task_heartbeat.sql; TypeScript: TaskStore.heartbeat)
-- Purpose: the current attempt extends its lease and learns whether a cancel was requested.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters: :task_id, :attempt_token, :lease_ms (1000 .. 3600000)
-- Result: one row (task_id, lease_expires_at, cancel_requested, db_now)
-- Errors (message): task_not_found, attempt_lost, invalid_argument.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' WHERE :lease_ms IS NULL OR :lease_ms < 1000 OR :lease_ms > 3600000;
INSERT INTO pc_aps_signals (code)
SELECT 'task_not_found' WHERE NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE task_id = :task_id);
INSERT INTO pc_aps_signals (code)
SELECT 'attempt_lost'
 WHERE NOT EXISTS (
   SELECT 1 FROM pc_durable_task_live_attempts
    WHERE task_id = :task_id AND attempt_token = :attempt_token);
UPDATE pc_durable_tasks
   SET heartbeat_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
       lease_expires_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '+' || (:lease_ms / 1000.0) || ' seconds'),
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE task_id = :task_id;
SELECT task_id, lease_expires_at, cancel_requested, strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now FROM pc_durable_tasks WHERE task_id = :task_id;
COMMIT;
