-- Operation: pc_task_publish_readiness   (MySQL twin: procedures/oceanbase/pc_task_publish_readiness.sql; TypeScript: TaskStore.publishReadiness)
-- Purpose: a task worker publishes a readiness fact with a short TTL (database clock); also
--   deletes at most 100 facts that expired more than an hour ago (vanished workers), so the
--   table does not grow with every process start.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters: :worker_id, :ttl_ms (1000 .. 600000)
-- Result: one row (worker_id, expires_at)
-- Errors (message): invalid_argument.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument' WHERE :worker_id IS NULL OR :worker_id = '' OR :ttl_ms IS NULL OR :ttl_ms < 1000 OR :ttl_ms > 600000;
INSERT INTO pc_durable_task_workers (worker_id, published_at, expires_at)
VALUES (:worker_id, strftime('%Y-%m-%d %H:%M:%f', 'now'), strftime('%Y-%m-%d %H:%M:%f', 'now', '+' || (:ttl_ms / 1000.0) || ' seconds'))
ON CONFLICT (worker_id) DO UPDATE SET published_at = excluded.published_at, expires_at = excluded.expires_at;
DELETE FROM pc_durable_task_workers
 WHERE worker_id IN (SELECT worker_id FROM pc_durable_task_workers
                      WHERE expires_at < strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 hour') LIMIT 100);
SELECT worker_id, expires_at FROM pc_durable_task_workers WHERE worker_id = :worker_id;
COMMIT;
