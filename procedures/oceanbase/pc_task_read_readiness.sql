-- Operation: pc_task_read_readiness   (SQLite twin: sql/sqlite/pc_task_read_readiness.sql; TypeScript: TaskStore.readReadiness)
-- Purpose: whether any task worker is alive: the number of unexpired readiness facts.
-- Transaction: none.
-- Parameters: none.
-- Result: one row (live_workers, latest_published_at, db_now)
-- Errors: none.
CREATE PROCEDURE pc_task_read_readiness()
BEGIN
  SELECT COUNT(*) AS live_workers, MAX(published_at) AS latest_published_at, UTC_TIMESTAMP(3) AS db_now
    FROM pc_durable_task_workers WHERE expires_at > UTC_TIMESTAMP(3);
END
