-- Operation: pc_aps_read_lease   (MySQL twin: procedures/oceanbase/pc_aps_read_lease.sql; TypeScript: Store.readLease)
-- Purpose: read the current term of a supervisor key, for status. Decides no write.
-- Transaction: none (a single read).
-- Parameters:
--   :supervisor_key
-- Result: one row (supervisor_key, holder_id, supervisor_generation, expires_at, live, db_now);
--   a key without a row reads as generation 0, holder NULL, live 0.
-- Errors: none.
SELECT :supervisor_key AS supervisor_key,
       l.holder_id,
       COALESCE(l.supervisor_generation, 0) AS supervisor_generation,
       l.expires_at,
       CASE WHEN l.holder_id IS NOT NULL
                 AND (l.expires_at IS NULL OR l.expires_at > strftime('%Y-%m-%d %H:%M:%f', 'now'))
            THEN 1 ELSE 0 END AS live,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM (SELECT 1 AS one) d
  LEFT JOIN pc_artifact_processing_leases l ON l.supervisor_key = :supervisor_key;
