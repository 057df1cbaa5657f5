-- Migration 0001 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): supervisor schema.
--
-- Creates the three tables of the Artifact Processing Supervisor:
--   pc_artifact_processing_leases          one row per supervisor key ('global', 'artifact:<family>'):
--                                          the fencing term (holder_id, supervisor_generation, expires_at).
--   pc_artifact_processing_intents         one row per scheduling key (binding_name, scope_id): two
--                                          independent generation pairs (dirty/clean, requested/handled)
--                                          and the per-scan admission mark. Rows are kept, never
--                                          deleted and re-created, so generations are never reused.
--   pc_artifact_processing_binding_states  one row per binding: schedule checkpoint and scan state.
--
-- Invariants enforced by CHECK constraints (and by every procedure before it writes):
--   0 <= clean_generation <= dirty_generation, 0 <= handled_generation <= requested_generation.
-- pending_sequence is AUTO_INCREMENT: unique, assigned once at first registration, never reused.
-- Indexes: ix_pc_api_scan makes a scan page an index range read over keys with ordinary work,
-- ix_pc_api_owed makes owed-request discovery an index range read over keys with requested > handled.
-- Both rely on STORED generated flag columns (see procedures/oceanbase/COMPATIBILITY.md).
-- All times are DATETIME(3) in UTC: every connection sets time_zone = '+00:00'.
-- Binary collation: binding and scope identifiers compare byte for byte.

CREATE TABLE pc_artifact_processing_leases (
  supervisor_key        VARCHAR(191) NOT NULL,
  holder_id             VARCHAR(128) NULL,
  supervisor_generation BIGINT       NOT NULL DEFAULT 0,
  expires_at            DATETIME(3)  NULL,
  acquired_at           DATETIME(3)  NULL,
  renewed_at            DATETIME(3)  NULL,
  updated_at            DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (supervisor_key),
  CONSTRAINT ck_pc_apl_generation CHECK (supervisor_generation >= 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE pc_artifact_processing_intents (
  binding_name              VARCHAR(128) NOT NULL,
  scope_id                  VARCHAR(191) NOT NULL,
  pending_sequence          BIGINT       NOT NULL AUTO_INCREMENT,
  dirty_generation          BIGINT       NOT NULL DEFAULT 0,
  clean_generation          BIGINT       NOT NULL DEFAULT 0,
  requested_generation      BIGINT       NOT NULL DEFAULT 0,
  handled_generation        BIGINT       NOT NULL DEFAULT 0,
  last_auto_scan_generation BIGINT       NOT NULL DEFAULT 0,
  last_auto_scan_page       BIGINT       NOT NULL DEFAULT 0,
  has_ordinary_work         TINYINT      GENERATED ALWAYS AS (dirty_generation > clean_generation) STORED,
  has_owed_request          TINYINT      GENERATED ALWAYS AS (requested_generation > handled_generation) STORED,
  created_at                DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  updated_at                DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (binding_name, scope_id),
  UNIQUE KEY uk_pc_api_pending_sequence (pending_sequence),
  KEY ix_pc_api_binding_sequence (binding_name, pending_sequence),
  KEY ix_pc_api_scan (binding_name, has_ordinary_work, pending_sequence),
  KEY ix_pc_api_owed (binding_name, has_owed_request, pending_sequence),
  CONSTRAINT ck_pc_api_clean CHECK (clean_generation >= 0 AND clean_generation <= dirty_generation),
  CONSTRAINT ck_pc_api_handled CHECK (handled_generation >= 0 AND handled_generation <= requested_generation),
  CONSTRAINT ck_pc_api_scan_mark CHECK (last_auto_scan_generation >= 0 AND last_auto_scan_page >= 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE pc_artifact_processing_binding_states (
  binding_name                VARCHAR(128) NOT NULL,
  last_schedule_checkpoint_at DATETIME(3)  NULL,
  scan_generation             BIGINT       NOT NULL DEFAULT 0,
  scan_in_progress            TINYINT      NOT NULL DEFAULT 0,
  scan_upper_pending_sequence BIGINT       NULL,
  scan_started_at             DATETIME(3)  NULL,
  scan_finished_at            DATETIME(3)  NULL,
  scan_page_counter           BIGINT       NOT NULL DEFAULT 0,
  updated_at                  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (binding_name),
  CONSTRAINT ck_pc_apbs_flag CHECK (scan_in_progress IN (0, 1)),
  CONSTRAINT ck_pc_apbs_upper CHECK (scan_in_progress = 0 OR scan_upper_pending_sequence IS NOT NULL),
  CONSTRAINT ck_pc_apbs_generation CHECK (scan_generation >= 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
