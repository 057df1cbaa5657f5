-- Migration 0009 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): the adoption ledger.
-- `apsup migrate adopt <source>` converts the state of a scheduler this runtime replaces (Topic
-- Memory PR #1490, Profile's APScheduler job store; migrations/oceanbase/adopt/) in a maintenance
-- window; each conversion records one row here in its own transaction, so it runs at most once
-- and `apsup migrate status` can show it. The conversion procedures
-- (pc_aps_adopt_topic_memory_pr1490, pc_aps_adopt_profile_apscheduler) read tables that exist
-- only in a database being adopted; they are installed by the adoption plan itself, right before
-- they run, and recorded in pc_aps_procedure_checksums like any other (COMPATIBILITY.md).
--   adoption      'topic_memory_pr1490' | 'profile_apscheduler'
--   state         'converted' (old state kept, consistency checked) | 'retired' (old state dropped)
--   summary       what the conversion produced (counts, checkpoint), for the operator
CREATE TABLE pc_aps_adoptions (
  adoption     VARCHAR(64)   NOT NULL,
  state        VARCHAR(16)   NOT NULL,
  summary      VARCHAR(1024) NOT NULL,
  converted_at DATETIME(3)   NOT NULL,
  retired_at   DATETIME(3)   NULL,
  PRIMARY KEY (adoption),
  CONSTRAINT ck_pc_aps_adoptions_state CHECK (state IN ('converted', 'retired'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
