-- Migration 0014 (SQLite): set-based batched intake (issue 12 item 4), the twin of MySQL 0022.
-- A batch list travels as its items concatenated plus an index of fixed-width end offsets; the
-- scripts cut every item against the ordinals 1..1000 of pc_aps_batch_ordinals.
-- pc_aps_mark_dirty_batch and pc_aps_accept_request_batch include one body
-- (sql/sqlite/pc_aps_intake_batch.sql), told their counter by the one row they write into
-- pc_aps_intake_batch_counter (emptied again before the script ends, like the item rows).
CREATE TABLE pc_aps_batch_ordinals (
  n INTEGER NOT NULL PRIMARY KEY
);
INSERT INTO pc_aps_batch_ordinals (n)
WITH RECURSIVE o(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM o WHERE n < 1000)
SELECT n FROM o;
CREATE TABLE pc_aps_intake_batch_counter (
  counter TEXT NOT NULL CHECK (counter IN ('dirty', 'requested'))
);
