-- Operation: pc_task_read   (SQLite twin: sql/sqlite/pc_task_read.sql; TypeScript: TaskStore.read)
-- Purpose: one task in full: state, progress, message, attempts, owner, timestamps, result or error.
-- Transaction: none; inside the caller's transaction it reads that transaction's view.
-- Parameters: p_task_id BIGINT
-- Result: zero rows or one row (every column of pc_durable_tasks except active_dedupe_key, db_now)
-- Errors: none.
CREATE PROCEDURE pc_task_read(
  IN p_task_id BIGINT
)
BEGIN
  SELECT task_id, task_type, handler_version, payload, state, dedupe_key, timeout_ms, attempt_count,
         attempt_token, attempt_owner, heartbeat_at, lease_expires_at, cancel_requested,
         progress_current, progress_total, progress_message, result, error_code, error_message,
         resumed_from_task_id, created_at, started_at, finished_at, updated_at, UTC_TIMESTAMP(3) AS db_now
    FROM pc_durable_tasks WHERE task_id = p_task_id;
END
