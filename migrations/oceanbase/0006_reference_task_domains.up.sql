-- Migration 0006 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): domain tables of the reference
-- task handlers (src/tasks/reference/); same as migrations/sqlite/0004_reference_task_domains.
CREATE TABLE ref_files (
  file_id       VARCHAR(191) NOT NULL PRIMARY KEY,
  state         VARCHAR(32)  NOT NULL DEFAULT 'uploaded',
  chunks        INT          NOT NULL DEFAULT 0,
  task_id       BIGINT       NULL,
  attempt_token CHAR(36)     NULL,
  error         VARCHAR(1024) NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
CREATE TABLE ref_datasets (
  dataset_id    VARCHAR(191) NOT NULL PRIMARY KEY,
  target_items  INT          NOT NULL,
  generated     INT          NOT NULL DEFAULT 0,
  state         VARCHAR(32)  NOT NULL DEFAULT 'new',
  task_id       BIGINT       NULL,
  attempt_token CHAR(36)     NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
