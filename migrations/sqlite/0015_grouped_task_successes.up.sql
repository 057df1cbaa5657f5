-- Migration 0015 (SQLite): the work table of sql/sqlite/pc_task_succeed_batch.sql (issue 12).
-- The script parses its list parameters once into these rows, decides each item's outcome under
-- its BEGIN IMMEDIATE lock, applies the successes set-based and deletes the rows again before it
-- commits; outside a running script the table is empty.
--   ord            1-based position in the batch
--   task_id        the attempt's task
--   attempt_token  the attempt's token
--   result         the JSON result to store (NULL for an empty item)
--   outcome        'succeeded', or the error pc_task_complete raises for the item
CREATE TABLE pc_task_succeed_batch_items (
  ord           INTEGER NOT NULL PRIMARY KEY,
  task_id       INTEGER NOT NULL,
  attempt_token TEXT    NOT NULL,
  result        TEXT    NULL,
  outcome       TEXT    NULL
);
