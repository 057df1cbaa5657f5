-- Baseline: the APScheduler job store the Profile sidecar used (OceanBase MySQL mode / MySQL 8 /
-- MariaDB 10.11), as created by APScheduler 3.x SQLAlchemyJobStore with its default table name.
--
-- Never executed against a deployed database: `apsup migrate adopt profile-apscheduler` checks
-- that the table has this shape (profile_apscheduler.preflight.sql) and reads the Profile job's
-- next_run_time. The tests build legacy fixtures from this file.
--
-- Assumptions (written down for the DBA):
--   * one row per job; Profile's cron job has a stable id (default 'profile-refresh', option
--     --job-id); next_run_time is the next fire APScheduler would run, in seconds since the Unix
--     epoch (UTC), NULL for a paused job; job_state is APScheduler's pickled job and is not read.
--   * the job's trigger is the configured Profile cron (POWERCONTEXT_SERVER_RUNTIME_PROFILE_CRON
--     and _TIMEZONE): a scheduled next_run_time must be a fire of that cron. Profile's first
--     enable added the job with an immediate next_run_time (the start-up catch-up), which is not
--     a fire of the cron.
--   * the job store lives in the same database as the runtime.
CREATE TABLE apscheduler_jobs (
  id            VARCHAR(191) NOT NULL,
  next_run_time DOUBLE       NULL,
  job_state     LONGBLOB     NOT NULL,
  PRIMARY KEY (id),
  INDEX ix_apscheduler_jobs_next_run_time (next_run_time)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
