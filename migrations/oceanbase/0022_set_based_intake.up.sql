-- Migration 0022 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): set-based batched intake
-- (issue 12 item 4). The batch procedures of 0019 walked their lists in a loop and ran the single
-- call's statements for every item; now a list travels as its items concatenated plus an index of
-- fixed-width end offsets (COMPATIBILITY row 111), every item is cut in constant time against the
-- ordinals 1..1000 of pc_aps_batch_ordinals, and:
--   * pc_aps_mark_dirty_batch and pc_aps_accept_request_batch call one body,
--     pc_aps_intake_batch (the counter is the only difference): one UPDATE of the existing keys,
--     one INSERT of the new ones, one SELECT of the result (one row per item, the single call's
--     row);
--   * pc_task_submit_batch inserts the new tasks in one statement (the per-item statements stay
--     as the fallback when a dedupe key races).
-- The parameters and the result shapes of the three batch procedures change: a runtime of the
-- previous version cannot call them. Irreversible by design (no down file): the previous
-- procedure versions are not kept.
CREATE TABLE pc_aps_batch_ordinals (
  n SMALLINT NOT NULL PRIMARY KEY
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT INTO pc_aps_batch_ordinals (n)
SELECT h.d * 100 + t.d * 10 + u.d + 1
  FROM (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
        UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) h
 CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
        UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) t
 CROSS JOIN (SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
        UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9) u;
-- @procedure pc_aps_intake_batch sha256=e2ee576ae013e9b5ab1bd6e5fdb6aa9164b37c288b03deda2429799d616868da
-- @procedure pc_aps_mark_dirty_batch sha256=f0593412940491a08a10a2c0aba6a427f39fa21440786a80e35915f9f3d30362
-- @procedure pc_aps_accept_request_batch sha256=88035a960dbeeee0b23326ac6eeb344d008fa86b86913a92771f03a31c171810
-- @procedure pc_task_submit_batch sha256=9751ff084a64b17d94af4bedbf62bcb9207e5888b70d45b4fde07a6916d3fe96
