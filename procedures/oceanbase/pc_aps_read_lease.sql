-- Operation: pc_aps_read_lease   (SQLite twin: sql/sqlite/pc_aps_read_lease.sql; TypeScript: Store.readLease)
-- Purpose: read the current term of a supervisor key, for status and standby reporting.
--   A plain read: it fences nothing and must never be used to decide a write.
-- Transaction: none needed (a single consistent read).
-- Parameters:
--   p_supervisor_key VARCHAR(191)
-- Result: one row (supervisor_key, holder_id, supervisor_generation, expires_at, live, db_now);
--   a key without a row reads as generation 0, holder NULL, live 0.
-- Errors: none.
CREATE PROCEDURE pc_aps_read_lease(
  IN p_supervisor_key VARCHAR(191)
)
BEGIN
  SELECT p_supervisor_key AS supervisor_key,
         l.holder_id,
         COALESCE(l.supervisor_generation, 0) AS supervisor_generation,
         l.expires_at,
         CASE WHEN l.holder_id IS NOT NULL AND (l.expires_at IS NULL OR l.expires_at > UTC_TIMESTAMP(3))
              THEN 1 ELSE 0 END AS live,
         UTC_TIMESTAMP(3) AS db_now
    FROM (SELECT 1 AS one) d
    LEFT JOIN pc_artifact_processing_leases l ON l.supervisor_key = p_supervisor_key;
END
