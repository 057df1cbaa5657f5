-- Operation: pc_task_read_readiness   (MySQL twin: procedures/oceanbase/pc_task_read_readiness.sql; TypeScript: TaskStore.readReadiness)
-- Purpose: whether any task worker is alive: the number of unexpired readiness facts.
-- Transaction: none.
-- Parameters: none.
-- Result: one row (live_workers, latest_published_at, db_now)
-- Errors: none.
SELECT COUNT(*) AS live_workers, MAX(published_at) AS latest_published_at, strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_durable_task_workers WHERE expires_at > strftime('%Y-%m-%d %H:%M:%f', 'now');
