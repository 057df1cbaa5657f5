-- Operation: pc_aps_read_runtime_mode   (MySQL twin: procedures/oceanbase/pc_aps_read_runtime_mode.sql; TypeScript: Store.readRuntimeMode)
-- Purpose: read the recorded supervisor mode (NULL before the first start) and the maintenance
--   flag, with the database clock (status, mode-switch). Decides no write.
-- Transaction: none.
-- Parameters: none.
-- Result: one row (mode, maintenance, updated_at, db_now).
-- Errors: none.
SELECT r.mode,
       COALESCE(r.maintenance, 0) AS maintenance,
       r.updated_at,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM (SELECT 1 AS one) d
  LEFT JOIN pc_artifact_processing_runtime r ON r.runtime_id = 1;
