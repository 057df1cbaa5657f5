-- Baseline: the APScheduler job store the Profile sidecar used (SQLite), as created by
-- APScheduler 3.x SQLAlchemyJobStore with its default table name.
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
  id            VARCHAR(191) NOT NULL PRIMARY KEY,
  next_run_time FLOAT        NULL,
  job_state     BLOB         NOT NULL
);
CREATE INDEX ix_apscheduler_jobs_next_run_time ON apscheduler_jobs (next_run_time);
