-- Migration 0012 (SQLite): the work tables of the batched intake scripts
-- (sql/sqlite/pc_aps_mark_dirty_batch.sql, pc_aps_accept_request_batch.sql, pc_task_submit_batch.sql).
-- A batch script parses its list parameters once into these rows, applies them set-based and
-- deletes them again before it ends; they run inside the caller's transaction (one writer holds
-- the lock), so no two batches ever share them, and outside a running script they are empty.
--   pc_aps_intake_batch_items   ord (1-based position in the batch), scope_id (the binding is the batch's)
--   pc_task_submit_batch_items  ord, the raw list items of one task (checked before use), and
--                               the outcome and task id the script decides for it
CREATE TABLE pc_aps_intake_batch_items (
  ord      INTEGER NOT NULL PRIMARY KEY,
  scope_id TEXT    NOT NULL
);
CREATE TABLE pc_task_submit_batch_items (
  ord                  INTEGER NOT NULL PRIMARY KEY,
  task_type            TEXT    NULL,
  handler_version      TEXT    NULL,
  payload_len          TEXT    NULL,
  payload              TEXT    NULL,
  key_len              TEXT    NULL,
  dedupe_key           TEXT    NULL,
  timeout_ms           TEXT    NULL,
  resumed_from_task_id TEXT    NULL,
  outcome              TEXT    NULL,
  task_id              INTEGER NULL
);
