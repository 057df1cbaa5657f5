-- Operation: pc_task_read   (MySQL twin: procedures/oceanbase/pc_task_read.sql; TypeScript: TaskStore.read)
-- Purpose: one task in full.
-- Transaction: none.
-- Parameters: :task_id
-- Result: zero rows or one row (every column of pc_durable_tasks, db_now)
-- Errors: none.
SELECT task_id, task_type, handler_version, payload, state, dedupe_key, timeout_ms, attempt_count,
       attempt_token, attempt_owner, heartbeat_at, lease_expires_at, cancel_requested,
       progress_current, progress_total, progress_message, result, error_code, error_message,
       resumed_from_task_id, created_at, started_at, finished_at, updated_at, strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_durable_tasks WHERE task_id = :task_id;
