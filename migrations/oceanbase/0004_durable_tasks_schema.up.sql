-- Migration 0004 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): durable tasks.
--   pc_durable_tasks          one row per task: execution intent (type, handler version, payload),
--                             state, dedupe key, attempt owner/token/count, heartbeat and lease
--                             (database clock), cancel intent, progress, result or error.
--   pc_durable_task_control   one row ('claims') locked by every claim, so counting running tasks
--                             and taking one is atomic without gap locks (cap, default 4).
--   pc_durable_task_workers   readiness facts: one row per worker with a short expiry.
-- At most one ACTIVE (pending/running) task per dedupe key: the UNIQUE index on the STORED
-- generated column active_dedupe_key, NULL once the task is terminal (which releases the key).
CREATE TABLE pc_durable_tasks (
  task_id              BIGINT        NOT NULL AUTO_INCREMENT,
  task_type            VARCHAR(128)  NOT NULL,
  handler_version      INT           NOT NULL,
  payload              MEDIUMTEXT    NOT NULL,
  state                VARCHAR(16)   NOT NULL DEFAULT 'pending',
  dedupe_key           VARCHAR(191)  NULL,
  active_dedupe_key    VARCHAR(191)  GENERATED ALWAYS AS (CASE WHEN state IN ('pending', 'running') THEN dedupe_key ELSE NULL END) STORED,
  timeout_ms           BIGINT        NOT NULL,
  attempt_count        INT           NOT NULL DEFAULT 0,
  attempt_token        CHAR(36)      NULL,
  attempt_owner        VARCHAR(128)  NULL,
  heartbeat_at         DATETIME(3)   NULL,
  lease_expires_at     DATETIME(3)   NULL,
  cancel_requested     TINYINT       NOT NULL DEFAULT 0,
  progress_current     DOUBLE        NULL,
  progress_total       DOUBLE        NULL,
  progress_message     VARCHAR(1024) NULL,
  result               MEDIUMTEXT    NULL,
  error_code           VARCHAR(64)   NULL,
  error_message        VARCHAR(2048) NULL,
  resumed_from_task_id BIGINT        NULL,
  created_at           DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  started_at           DATETIME(3)   NULL,
  finished_at          DATETIME(3)   NULL,
  updated_at           DATETIME(3)   NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (task_id),
  UNIQUE KEY uk_pc_dt_active_dedupe (active_dedupe_key),
  KEY ix_pc_dt_state (state, task_id),
  KEY ix_pc_dt_lease (state, lease_expires_at),
  CONSTRAINT ck_pc_dt_state CHECK (state IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
  CONSTRAINT ck_pc_dt_running CHECK (state <> 'running' OR (attempt_token IS NOT NULL AND lease_expires_at IS NOT NULL)),
  CONSTRAINT ck_pc_dt_timeout CHECK (timeout_ms > 0),
  CONSTRAINT ck_pc_dt_attempts CHECK (attempt_count >= 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE pc_durable_task_control (
  name       VARCHAR(32) NOT NULL PRIMARY KEY,
  updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT INTO pc_durable_task_control (name) VALUES ('claims');

CREATE TABLE pc_durable_task_workers (
  worker_id    VARCHAR(128) NOT NULL PRIMARY KEY,
  published_at DATETIME(3)  NOT NULL,
  expires_at   DATETIME(3)  NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
