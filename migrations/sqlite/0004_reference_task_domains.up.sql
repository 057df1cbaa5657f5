-- Migration 0004 (SQLite): domain tables of the reference task handlers (src/tasks/reference/),
-- used by `apsup tasks` demos and the tests. Each domain row records the task and attempt that
-- own its intermediate state, so a late attempt cannot commit and a failure hook converges only
-- rows that still belong to the failed task.
CREATE TABLE ref_files (
  file_id       TEXT    NOT NULL PRIMARY KEY,
  state         TEXT    NOT NULL DEFAULT 'uploaded',
  chunks        INTEGER NOT NULL DEFAULT 0,
  task_id       INTEGER NULL,
  attempt_token TEXT    NULL,
  error         TEXT    NULL
);
CREATE TABLE ref_datasets (
  dataset_id    TEXT    NOT NULL PRIMARY KEY,
  target_items  INTEGER NOT NULL,
  generated     INTEGER NOT NULL DEFAULT 0,
  state         TEXT    NOT NULL DEFAULT 'new',
  task_id       INTEGER NULL,
  attempt_token TEXT    NULL
);
