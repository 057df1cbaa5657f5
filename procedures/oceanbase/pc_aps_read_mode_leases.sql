-- Operation: pc_aps_read_mode_leases   (SQLite twin: sql/sqlite/pc_aps_read_mode_leases.sql; TypeScript: readModeLeases)
-- Purpose: every lease row of one mode the database holds ('global'; or every 'artifact:%'
--   key, also of a family no longer in any families module), for `apsup mode-switch` to name a
--   live candidate of the old mode before pc_aps_switch_mode re-checks it atomically (RFC 9).
--   A plain read: it fences nothing and decides no write.
-- Transaction: none needed (a single consistent read).
-- Parameters:
--   p_mode   VARCHAR(16)  'global' or 'dedicated'
-- Result: one row per lease row of the mode, ordered by key (supervisor_key, holder_id,
--   supervisor_generation, expires_at, live, db_now).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  unknown mode.
CREATE PROCEDURE pc_aps_read_mode_leases(
  IN p_mode VARCHAR(16)
)
BEGIN
  DECLARE v_pattern VARCHAR(16);
  IF p_mode IS NULL OR p_mode NOT IN ('global', 'dedicated') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SET v_pattern = IF(p_mode = 'global', 'global', 'artifact:%');
  SELECT supervisor_key,
         holder_id,
         supervisor_generation,
         expires_at,
         CASE WHEN holder_id IS NOT NULL AND (expires_at IS NULL OR expires_at > UTC_TIMESTAMP(3))
              THEN 1 ELSE 0 END AS live,
         UTC_TIMESTAMP(3) AS db_now
    FROM pc_artifact_processing_leases
   WHERE supervisor_key LIKE v_pattern
   ORDER BY supervisor_key;
END
