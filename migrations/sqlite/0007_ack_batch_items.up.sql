-- Migration 0007 (SQLite): the work table of pc_aps_acknowledge_batch (sql/sqlite/pc_aps_acknowledge_batch.sql).
-- The batch script parses its comma-separated parameters once into these rows, checks and applies
-- them set-based, and deletes them again before its COMMIT; outside that BEGIN IMMEDIATE
-- transaction the table is always empty (SQLite has one writer, so no two batches share it).
--   ord            position of the key in the batch (1-based), the order of the result lists
--   scope_id       the key's scope id (the binding is the batch's)
--   claimed        the requested generation read when the invocation started
--   clean_through  the start snapshot's dirty generation to confirm as clean, or NULL
CREATE TABLE pc_aps_ack_batch_items (
  ord           INTEGER NOT NULL PRIMARY KEY,
  scope_id      TEXT NOT NULL,
  claimed       INTEGER NULL,
  clean_through INTEGER NULL
);
