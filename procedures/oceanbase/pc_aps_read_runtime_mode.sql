-- Operation: pc_aps_read_runtime_mode   (SQLite twin: sql/sqlite/pc_aps_read_runtime_mode.sql; TypeScript: Store.readRuntimeMode)
-- Purpose: read the recorded supervisor mode (NULL before the first start) and the maintenance
--   flag, with the database clock (status, mode-switch). A plain read: it decides no write.
-- Transaction: none needed.
-- Parameters: none.
-- Result: one row (mode, maintenance, updated_at, db_now).
-- Errors: none.
CREATE PROCEDURE pc_aps_read_runtime_mode()
BEGIN
  SELECT r.mode,
         COALESCE(r.maintenance, 0) AS maintenance,
         r.updated_at,
         UTC_TIMESTAMP(3) AS db_now
    FROM (SELECT 1 AS one) d
    LEFT JOIN pc_artifact_processing_runtime r ON r.runtime_id = 1;
END
