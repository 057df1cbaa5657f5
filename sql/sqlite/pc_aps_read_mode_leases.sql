-- Operation: pc_aps_read_mode_leases   (MySQL twin: procedures/oceanbase/pc_aps_read_mode_leases.sql; TypeScript: readModeLeases)
-- Purpose: every lease row of one mode the database holds ('global'; or every 'artifact:%'
--   key, also of a family no longer in any families module), for `apsup mode-switch` (RFC 9).
--   Decides no write.
-- Transaction: none (a single read).
-- Parameters:
--   :mode   'global' or 'dedicated'
-- Result: one row per lease row of the mode, ordered by key (supervisor_key, holder_id,
--   supervisor_generation, expires_at, live, db_now).
-- Errors (message):
--   invalid_argument  unknown mode (no rows are read for it).
SELECT supervisor_key,
       holder_id,
       supervisor_generation,
       expires_at,
       CASE WHEN holder_id IS NOT NULL
                 AND (expires_at IS NULL OR expires_at > strftime('%Y-%m-%d %H:%M:%f', 'now'))
            THEN 1 ELSE 0 END AS live,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_artifact_processing_leases
 WHERE (:mode = 'global' AND supervisor_key = 'global')
    OR (:mode = 'dedicated' AND substr(supervisor_key, 1, 9) = 'artifact:')
 ORDER BY supervisor_key;
