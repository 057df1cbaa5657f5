-- Operation: pc_aps_read_family_backlog   (MySQL twin: procedures/oceanbase/pc_aps_read_family_backlog.sql; TypeScript: Store.readFamilyBacklog)
-- Purpose: status counts of one binding, bounded: keys owing an invocation (requested > handled)
--   and keys with ordinary backlog (dirty > clean), each counted over its partial index
--   (ix_pc_api_owed, ix_pc_api_scan) and capped at :count_cap rows by a LIMITed subquery, so
--   the read stays fast on millions of keys. A count equal to the cap means "at least".
-- Transaction: none.
-- Parameters:
--   :binding_name
--   :count_cap     upper bound of each count
-- Result: one row (binding_name, owed_count, backlog_count, count_cap, db_now)
-- Errors: none.
SELECT :binding_name AS binding_name,
       (SELECT COUNT(*) FROM (SELECT 1 FROM pc_artifact_processing_intents
                               WHERE binding_name = :binding_name AND requested_generation > handled_generation
                               LIMIT :count_cap)) AS owed_count,
       (SELECT COUNT(*) FROM (SELECT 1 FROM pc_artifact_processing_intents
                               WHERE binding_name = :binding_name AND dirty_generation > clean_generation
                               LIMIT :count_cap)) AS backlog_count,
       :count_cap AS count_cap,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now;
