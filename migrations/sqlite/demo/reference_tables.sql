-- Demo schema (sqlite): the domain tables of the reference families (src/families/) and of the
-- reference task handlers (src/tasks/reference/). Not a migration and not part of a production
-- database: installed by `apsup start`, `apsup migrate up --with-demo` and the test fixtures
-- (src/devtools/ephemeral-database.ts), after the migrations. Idempotent (IF NOT EXISTS): the
-- shapes are those of the migrations that used to create them (0002_reference_families, 0004_reference_task_domains);
-- migration 0013 dropped them where they were empty.
CREATE TABLE IF NOT EXISTS ref_topic_sources (
  scope_id   TEXT    NOT NULL,
  seq        INTEGER NOT NULL,
  words      INTEGER NOT NULL,
  poison     INTEGER NOT NULL DEFAULT 0,
  created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  PRIMARY KEY (scope_id, seq)
);
CREATE TABLE IF NOT EXISTS ref_topic_cursors (
  scope_id    TEXT    NOT NULL PRIMARY KEY,
  through_seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS ref_topic_digests (
  scope_id    TEXT    NOT NULL,
  through_seq INTEGER NOT NULL,
  from_seq    INTEGER NOT NULL,
  words       INTEGER NOT NULL,
  created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  PRIMARY KEY (scope_id, through_seq)
);
CREATE TABLE IF NOT EXISTS ref_experience_items (
  scope_id TEXT    NOT NULL PRIMARY KEY,
  version  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS ref_experience_state (
  scope_id          TEXT    NOT NULL PRIMARY KEY,
  processed_version INTEGER NOT NULL DEFAULT 0,
  refreshed_at      TEXT    NULL
);
CREATE TABLE IF NOT EXISTS ref_profile_signals (
  scope_id TEXT    NOT NULL,
  seq      INTEGER NOT NULL,
  PRIMARY KEY (scope_id, seq)
);
CREATE TABLE IF NOT EXISTS ref_profile_cursors (
  scope_id    TEXT    NOT NULL PRIMARY KEY,
  through_seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS ref_profile_candidates (
  scope_id    TEXT    NOT NULL,
  fire_at     TEXT    NOT NULL,
  through_seq INTEGER NOT NULL,
  status      TEXT    NOT NULL DEFAULT 'pending_review',
  created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  PRIMARY KEY (scope_id, fire_at)
);
CREATE TABLE IF NOT EXISTS ref_files (
  file_id       TEXT    NOT NULL PRIMARY KEY,
  state         TEXT    NOT NULL DEFAULT 'uploaded',
  chunks        INTEGER NOT NULL DEFAULT 0,
  task_id       INTEGER NULL,
  attempt_token TEXT    NULL,
  error         TEXT    NULL
);
CREATE TABLE IF NOT EXISTS ref_datasets (
  dataset_id    TEXT    NOT NULL PRIMARY KEY,
  target_items  INTEGER NOT NULL,
  generated     INTEGER NOT NULL DEFAULT 0,
  state         TEXT    NOT NULL DEFAULT 'new',
  task_id       INTEGER NULL,
  attempt_token TEXT    NULL
);
