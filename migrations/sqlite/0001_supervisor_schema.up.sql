-- Migration 0001 (SQLite, embedded default): supervisor schema.
--
-- Same tables, columns and invariants as migrations/oceanbase/0001_supervisor_schema.up.sql:
--   pc_artifact_processing_leases          one row per supervisor key: the fencing term. On SQLite
--                                          every legitimate start takes the term (generation + 1)
--                                          and expires_at stays NULL (no lease expiry, no election).
--   pc_artifact_processing_intents         one row per scheduling key (binding_name, scope_id).
--   pc_artifact_processing_binding_states  one row per binding: schedule checkpoint and scan state.
--   pc_aps_signals                         never holds rows: the operation scripts insert a stable
--                                          error code into it when a check fails, and its trigger
--                                          aborts the statement with that code (SQLite has no SIGNAL).
--
-- SQLite specifics (a DBA comparing with the MySQL schema):
--   * pending_sequence is the rowid (INTEGER PRIMARY KEY AUTOINCREMENT): unique, monotonic and
--     never reused, even after a delete; (binding_name, scope_id) is the unique logical key.
--   * The scan and owed-request indexes are partial indexes on exactly the predicates the scan
--     page and the discovery page use (dirty > clean, requested > handled), so both are index
--     range reads over keys that have work.
--   * Times are TEXT 'YYYY-MM-DD HH:MM:SS.SSS' in UTC (strftime('%Y-%m-%d %H:%M:%f','now')),
--     the same text MySQL returns for DATETIME(3), and they compare correctly as text.

CREATE TABLE pc_artifact_processing_leases (
  supervisor_key        TEXT    NOT NULL PRIMARY KEY,
  holder_id             TEXT    NULL,
  supervisor_generation INTEGER NOT NULL DEFAULT 0 CHECK (supervisor_generation >= 0),
  expires_at            TEXT    NULL,
  acquired_at           TEXT    NULL,
  renewed_at            TEXT    NULL,
  updated_at            TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);

CREATE TABLE pc_artifact_processing_intents (
  pending_sequence          INTEGER PRIMARY KEY AUTOINCREMENT,
  binding_name              TEXT    NOT NULL,
  scope_id                  TEXT    NOT NULL,
  dirty_generation          INTEGER NOT NULL DEFAULT 0,
  clean_generation          INTEGER NOT NULL DEFAULT 0,
  requested_generation      INTEGER NOT NULL DEFAULT 0,
  handled_generation        INTEGER NOT NULL DEFAULT 0,
  last_auto_scan_generation INTEGER NOT NULL DEFAULT 0,
  last_auto_scan_page       INTEGER NOT NULL DEFAULT 0,
  created_at                TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  updated_at                TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  CONSTRAINT uk_pc_api_key UNIQUE (binding_name, scope_id),
  CONSTRAINT ck_pc_api_clean CHECK (clean_generation >= 0 AND clean_generation <= dirty_generation),
  CONSTRAINT ck_pc_api_handled CHECK (handled_generation >= 0 AND handled_generation <= requested_generation),
  CONSTRAINT ck_pc_api_scan_mark CHECK (last_auto_scan_generation >= 0 AND last_auto_scan_page >= 0)
);

CREATE INDEX ix_pc_api_binding_sequence
  ON pc_artifact_processing_intents (binding_name, pending_sequence);
CREATE INDEX ix_pc_api_scan
  ON pc_artifact_processing_intents (binding_name, pending_sequence)
  WHERE dirty_generation > clean_generation;
CREATE INDEX ix_pc_api_owed
  ON pc_artifact_processing_intents (binding_name, pending_sequence)
  WHERE requested_generation > handled_generation;

CREATE TABLE pc_artifact_processing_binding_states (
  binding_name                TEXT    NOT NULL PRIMARY KEY,
  last_schedule_checkpoint_at TEXT    NULL,
  scan_generation             INTEGER NOT NULL DEFAULT 0 CHECK (scan_generation >= 0),
  scan_in_progress            INTEGER NOT NULL DEFAULT 0 CHECK (scan_in_progress IN (0, 1)),
  scan_upper_pending_sequence INTEGER NULL,
  scan_started_at             TEXT    NULL,
  scan_finished_at            TEXT    NULL,
  scan_page_counter           INTEGER NOT NULL DEFAULT 0,
  updated_at                  TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  CHECK (scan_in_progress = 0 OR scan_upper_pending_sequence IS NOT NULL)
);

-- The one definition of a live term on SQLite, used by every fenced script (the MySQL side has
-- the same rule once, in pc_aps_assert_term).
CREATE VIEW pc_artifact_processing_live_terms AS
SELECT supervisor_key, holder_id, supervisor_generation
  FROM pc_artifact_processing_leases
 WHERE holder_id IS NOT NULL
   AND (expires_at IS NULL OR expires_at > strftime('%Y-%m-%d %H:%M:%f', 'now'));

CREATE TABLE pc_aps_signals (
  code TEXT NOT NULL
);

-- The trigger aborts the statement with the inserted code as its message; the adapter maps known
-- codes to typed errors (src/store/errors.ts), so new codes need no schema change. (RAISE with an
-- expression needs SQLite >= 3.47; better-sqlite3 12 bundles 3.53.)
CREATE TRIGGER pc_aps_signals_raise BEFORE INSERT ON pc_aps_signals
BEGIN
  SELECT RAISE(ABORT, NEW.code);
END;
