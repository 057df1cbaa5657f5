-- Migration 0006 (SQLite): the adoption ledger. `apsup migrate adopt <source>` converts the state
-- of a scheduler this runtime replaces (Topic Memory PR #1490, Profile's APScheduler job store;
-- migrations/sqlite/adopt/) in a maintenance window; each conversion records one row here in its
-- own transaction, so it runs at most once and `apsup migrate status` can show it.
--   adoption      'topic_memory_pr1490' | 'profile_apscheduler'
--   state         'converted' (old state kept, consistency checked) | 'retired' (old state dropped)
--   summary       what the conversion produced (counts, checkpoint), for the operator
CREATE TABLE pc_aps_adoptions (
  adoption     TEXT NOT NULL PRIMARY KEY,
  state        TEXT NOT NULL,
  summary      TEXT NOT NULL,
  converted_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  retired_at   TEXT NULL,
  CONSTRAINT ck_pc_aps_adoptions_state CHECK (state IN ('converted', 'retired'))
);
