-- Migration 0008 (SQLite): the fingerprint of what each runtime candidate runs with, per
-- supervisor key (RFC 8, 10; pc_aps_register_candidate). On SQLite one host process runs (the
-- host lock), so its rows never expire (expires_at NULL) and a start replaces the rows a
-- stopped or crashed host left; the table records what the host runs with.
CREATE TABLE pc_aps_candidate_fingerprints (
  supervisor_key   TEXT NOT NULL,
  candidate_id     TEXT NOT NULL,
  role             TEXT NOT NULL CHECK (role IN ('all', 'api', 'background')),
  shared_sha256    TEXT NOT NULL,
  shared_text      TEXT NOT NULL,
  execution_sha256 TEXT NULL,
  execution_text   TEXT NULL,
  registered_at    TEXT NOT NULL,
  expires_at       TEXT NULL,
  PRIMARY KEY (supervisor_key, candidate_id)
);
CREATE INDEX ix_pc_aps_candidate_fingerprints_candidate ON pc_aps_candidate_fingerprints (candidate_id);
