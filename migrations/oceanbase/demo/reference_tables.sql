-- Demo schema (oceanbase): the domain tables of the reference families (src/families/) and of the
-- reference task handlers (src/tasks/reference/). Not a migration and not part of a production
-- database: installed by `apsup start`, `apsup migrate up --with-demo` and the test fixtures
-- (src/devtools/ephemeral-database.ts), after the migrations. Idempotent (IF NOT EXISTS): the
-- shapes are those of the migrations that used to create them (0003_reference_families, 0006_reference_task_domains);
-- migration 0020 dropped them where they were empty.
CREATE TABLE IF NOT EXISTS ref_topic_sources (
  scope_id   VARCHAR(191) NOT NULL,
  seq        BIGINT       NOT NULL,
  words      INT          NOT NULL,
  poison     TINYINT      NOT NULL DEFAULT 0,
  created_at DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (scope_id, seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS ref_topic_cursors (
  scope_id    VARCHAR(191) NOT NULL PRIMARY KEY,
  through_seq BIGINT       NOT NULL DEFAULT 0
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS ref_topic_digests (
  scope_id    VARCHAR(191) NOT NULL,
  through_seq BIGINT       NOT NULL,
  from_seq    BIGINT       NOT NULL,
  words       INT          NOT NULL,
  created_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (scope_id, through_seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS ref_experience_items (
  scope_id VARCHAR(191) NOT NULL PRIMARY KEY,
  version  BIGINT       NOT NULL DEFAULT 0
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS ref_experience_state (
  scope_id          VARCHAR(191) NOT NULL PRIMARY KEY,
  processed_version BIGINT       NOT NULL DEFAULT 0,
  refreshed_at      DATETIME(3)  NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS ref_profile_signals (
  scope_id VARCHAR(191) NOT NULL,
  seq      BIGINT       NOT NULL,
  PRIMARY KEY (scope_id, seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS ref_profile_cursors (
  scope_id    VARCHAR(191) NOT NULL PRIMARY KEY,
  through_seq BIGINT       NOT NULL DEFAULT 0
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS ref_profile_candidates (
  scope_id    VARCHAR(191) NOT NULL,
  fire_at     VARCHAR(23)  NOT NULL,
  through_seq BIGINT       NOT NULL,
  status      VARCHAR(32)  NOT NULL DEFAULT 'pending_review',
  created_at  DATETIME(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
  PRIMARY KEY (scope_id, fire_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS ref_files (
  file_id       VARCHAR(191) NOT NULL PRIMARY KEY,
  state         VARCHAR(32)  NOT NULL DEFAULT 'uploaded',
  chunks        INT          NOT NULL DEFAULT 0,
  task_id       BIGINT       NULL,
  attempt_token CHAR(36)     NULL,
  error         VARCHAR(1024) NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE IF NOT EXISTS ref_datasets (
  dataset_id    VARCHAR(191) NOT NULL PRIMARY KEY,
  target_items  INT          NOT NULL,
  generated     INT          NOT NULL DEFAULT 0,
  state         VARCHAR(32)  NOT NULL DEFAULT 'new',
  task_id       BIGINT       NULL,
  attempt_token CHAR(36)     NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
