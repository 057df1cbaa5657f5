-- Migration 0002 (SQLite): domain tables of the reference families shipped with the package
-- (src/families/): used by `npm start` and by the tests, never by the supervisor itself. A
-- deployment hosting only its own processors leaves them empty. Each family owns its progress.
--   topic-memory (ordered source): per-scope append-only journal, persisted cursor, digests.
--   experience (no source): a domain change version per scope, and the version processed.
--   profile (cron): per-scope signals, cursor, candidates awaiting review (one per cron fire).
CREATE TABLE ref_topic_sources (
  scope_id   TEXT    NOT NULL,
  seq        INTEGER NOT NULL,
  words      INTEGER NOT NULL,
  poison     INTEGER NOT NULL DEFAULT 0,
  created_at TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  PRIMARY KEY (scope_id, seq)
);
CREATE TABLE ref_topic_cursors (
  scope_id    TEXT    NOT NULL PRIMARY KEY,
  through_seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE ref_topic_digests (
  scope_id    TEXT    NOT NULL,
  through_seq INTEGER NOT NULL,
  from_seq    INTEGER NOT NULL,
  words       INTEGER NOT NULL,
  created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  PRIMARY KEY (scope_id, through_seq)
);
CREATE TABLE ref_experience_items (
  scope_id TEXT    NOT NULL PRIMARY KEY,
  version  INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE ref_experience_state (
  scope_id          TEXT    NOT NULL PRIMARY KEY,
  processed_version INTEGER NOT NULL DEFAULT 0,
  refreshed_at      TEXT    NULL
);
CREATE TABLE ref_profile_signals (
  scope_id TEXT    NOT NULL,
  seq      INTEGER NOT NULL,
  PRIMARY KEY (scope_id, seq)
);
CREATE TABLE ref_profile_cursors (
  scope_id    TEXT    NOT NULL PRIMARY KEY,
  through_seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE ref_profile_candidates (
  scope_id    TEXT    NOT NULL,
  fire_at     TEXT    NOT NULL,
  through_seq INTEGER NOT NULL,
  status      TEXT    NOT NULL DEFAULT 'pending_review',
  created_at  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  PRIMARY KEY (scope_id, fire_at)
);
