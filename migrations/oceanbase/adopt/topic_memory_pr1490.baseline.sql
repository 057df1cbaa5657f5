-- Baseline: the Topic Memory PR #1490 scheduler tables as deployed (OceanBase MySQL mode /
-- MySQL 8 / MariaDB 10.11).
--
-- Never executed against a deployed database: `apsup migrate adopt topic-memory-pr1490` checks
-- that a database has this shape (migrations/oceanbase/adopt/topic_memory_pr1490.preflight.sql)
-- and then converts it. The tests build legacy fixtures from this file.
--
-- Assumptions about PR #1490 (the RFC names the tables and the key columns; the rest is written
-- down here so that a DBA can compare it with the deployed schema before adopting it):
--   * pc_artifact_processing_leases: the global lease of the PR #1490 supervisor, key 'global',
--     with holder, generation and expiry judged by the database clock.
--   * pc_artifact_processing_binding_states: one row per processing binding; the automatic wave
--     in progress is auto_wave_generation with auto_wave_started_at set (NULL when no wave
--     runs); last_auto_wave_completed_at is the completion time of the last finished wave.
--   * pc_artifact_processing_pending: one row per (binding, scope) with source announced to the
--     binding: source_through is the latest Source journal position announced; a flush (explicit
--     request) increments flush_generation and is confirmed by flushed_generation. The row may
--     stay after its source is covered.
--   * pc_artifact_processing_source_cursors: the Source Cursor the PR #1490 supervisor read and
--     wrote: the position through which the scope's source is processed. Uncovered source is
--     source_through > source_cursor (a missing cursor row is position 0).
--   * pc_artifact_processing_auto_wave_targets: the scopes frozen into an automatic wave, with
--     the frozen source position; started_at when a worker took the target, completed_at when the
--     target finished. A target without completed_at is automatic work in progress.
-- Times are DATETIME(3) in UTC, as in the current schema.
CREATE TABLE pc_artifact_processing_leases (
  supervisor_key        VARCHAR(191) NOT NULL,
  holder_id             VARCHAR(128) NULL,
  supervisor_generation BIGINT       NOT NULL DEFAULT 0,
  expires_at            DATETIME(3)  NULL,
  updated_at            DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (supervisor_key)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE pc_artifact_processing_binding_states (
  binding_name                VARCHAR(191) NOT NULL,
  last_auto_wave_completed_at DATETIME(3)  NULL,
  auto_wave_generation        BIGINT       NOT NULL DEFAULT 0,
  auto_wave_started_at        DATETIME(3)  NULL,
  updated_at                  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (binding_name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE pc_artifact_processing_pending (
  binding_name       VARCHAR(191) NOT NULL,
  scope_id           VARCHAR(191) NOT NULL,
  source_through     BIGINT       NOT NULL,
  flush_generation   BIGINT       NOT NULL DEFAULT 0,
  flushed_generation BIGINT       NOT NULL DEFAULT 0,
  created_at         DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at         DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (binding_name, scope_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE pc_artifact_processing_source_cursors (
  binding_name  VARCHAR(191) NOT NULL,
  scope_id      VARCHAR(191) NOT NULL,
  source_cursor BIGINT       NOT NULL DEFAULT 0,
  updated_at    DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (binding_name, scope_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE pc_artifact_processing_auto_wave_targets (
  binding_name         VARCHAR(191) NOT NULL,
  auto_wave_generation BIGINT       NOT NULL,
  scope_id             VARCHAR(191) NOT NULL,
  source_through       BIGINT       NOT NULL,
  started_at           DATETIME(3)  NULL,
  completed_at         DATETIME(3)  NULL,
  PRIMARY KEY (binding_name, auto_wave_generation, scope_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
