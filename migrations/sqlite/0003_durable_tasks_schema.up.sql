-- Migration 0003 (SQLite): durable tasks; same tables as migrations/oceanbase/0004.
-- SQLite specifics: the active dedupe constraint is a partial UNIQUE index on dedupe_key
-- WHERE state IN ('pending', 'running'); claims are serialized by BEGIN IMMEDIATE, the control
-- row exists for symmetry. Attempt tokens are 32 hex characters from randomblob(16).
CREATE TABLE pc_durable_tasks (
  task_id              INTEGER PRIMARY KEY AUTOINCREMENT,
  task_type            TEXT    NOT NULL,
  handler_version      INTEGER NOT NULL,
  payload              TEXT    NOT NULL,
  state                TEXT    NOT NULL DEFAULT 'pending'
                       CHECK (state IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
  dedupe_key           TEXT    NULL,
  timeout_ms           INTEGER NOT NULL CHECK (timeout_ms > 0),
  attempt_count        INTEGER NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
  attempt_token        TEXT    NULL,
  attempt_owner        TEXT    NULL,
  heartbeat_at         TEXT    NULL,
  lease_expires_at     TEXT    NULL,
  cancel_requested     INTEGER NOT NULL DEFAULT 0,
  progress_current     REAL    NULL,
  progress_total       REAL    NULL,
  progress_message     TEXT    NULL,
  result               TEXT    NULL,
  error_code           TEXT    NULL,
  error_message        TEXT    NULL,
  resumed_from_task_id INTEGER NULL,
  created_at           TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  started_at           TEXT    NULL,
  finished_at          TEXT    NULL,
  updated_at           TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  CHECK (state <> 'running' OR (attempt_token IS NOT NULL AND lease_expires_at IS NOT NULL))
);
CREATE UNIQUE INDEX uk_pc_dt_active_dedupe ON pc_durable_tasks (dedupe_key)
  WHERE state IN ('pending', 'running');
CREATE INDEX ix_pc_dt_state ON pc_durable_tasks (state, task_id);
CREATE INDEX ix_pc_dt_lease ON pc_durable_tasks (state, lease_expires_at);

CREATE TABLE pc_durable_task_control (
  name       TEXT NOT NULL PRIMARY KEY,
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
INSERT INTO pc_durable_task_control (name) VALUES ('claims');

CREATE TABLE pc_durable_task_workers (
  worker_id    TEXT NOT NULL PRIMARY KEY,
  published_at TEXT NOT NULL,
  expires_at   TEXT NOT NULL
);

-- The one definition of a live attempt on SQLite (running, unexpired lease by the database clock),
-- used by every attempt-fenced script (MySQL: pc_task_assert_attempt).
CREATE VIEW pc_durable_task_live_attempts AS
SELECT task_id, attempt_token
  FROM pc_durable_tasks
 WHERE state = 'running'
   AND lease_expires_at > strftime('%Y-%m-%d %H:%M:%f', 'now');
