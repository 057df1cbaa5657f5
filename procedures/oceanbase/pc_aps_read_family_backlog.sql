-- Operation: pc_aps_read_family_backlog   (SQLite twin: sql/sqlite/pc_aps_read_family_backlog.sql; TypeScript: Store.readFamilyBacklog)
-- Purpose: status counts of one binding, bounded: keys owing an invocation (has_owed_request)
--   and keys with ordinary backlog (has_ordinary_work), each counted over its index
--   (ix_pc_api_owed, ix_pc_api_scan) and capped at p_count_cap rows by a LIMITed derived table,
--   so the read stays fast on millions of keys. A count equal to the cap means "at least".
-- Transaction: none needed.
-- Parameters:
--   p_binding_name VARCHAR(128)
--   p_count_cap    BIGINT  upper bound of each count
-- Result: one row (binding_name, owed_count, backlog_count, count_cap, db_now)
-- Errors: none.
CREATE PROCEDURE pc_aps_read_family_backlog(
  IN p_binding_name VARCHAR(128),
  IN p_count_cap    BIGINT
)
BEGIN
  DECLARE v_owed    BIGINT DEFAULT 0;
  DECLARE v_backlog BIGINT DEFAULT 0;
  SELECT COUNT(*) INTO v_owed
    FROM (SELECT 1 AS one FROM pc_artifact_processing_intents
           WHERE binding_name = p_binding_name AND has_owed_request = 1
           LIMIT p_count_cap) o;
  SELECT COUNT(*) INTO v_backlog
    FROM (SELECT 1 AS one FROM pc_artifact_processing_intents
           WHERE binding_name = p_binding_name AND has_ordinary_work = 1
           LIMIT p_count_cap) b;
  SELECT p_binding_name AS binding_name, v_owed AS owed_count, v_backlog AS backlog_count,
         p_count_cap AS count_cap, UTC_TIMESTAMP(3) AS db_now;
END
