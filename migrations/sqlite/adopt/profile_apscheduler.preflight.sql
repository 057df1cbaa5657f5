-- Preflight of `apsup migrate adopt profile-apscheduler` (SQLite): read-only checks before
-- anything is changed. Every statement returns the problems it finds as rows (problem,
-- binding_name, scope_id, detail); no rows means the check passed. The first statement checks the
-- job store shape; when it reports anything, the others are not run. The Profile job itself is
-- then read (SELECT next_run_time FROM apscheduler_jobs WHERE id = :job_id) and judged against
-- the configured cron; any problem stops the adoption with a report and changes nothing.
-- Parameters: :binding_name (the Profile binding), :job_id (the APScheduler job id).

-- baseline_shape: the APScheduler job store table or a column it must have is missing.
SELECT 'baseline_shape' AS problem, r.t AS binding_name, r.c AS scope_id,
       'missing ' || r.t || '.' || r.c AS detail
  FROM (SELECT 'apscheduler_jobs' AS t, 'id' AS c
        UNION ALL SELECT 'apscheduler_jobs', 'next_run_time'
        UNION ALL SELECT 'apscheduler_jobs', 'job_state') r
 WHERE NOT EXISTS (SELECT 1 FROM pragma_table_info(r.t) p WHERE p.name = r.c);

-- adoption_done: the job store was already adopted.
SELECT 'adoption_done' AS problem, :binding_name AS binding_name, NULL AS scope_id,
       'adopted ' || converted_at || ': ' || summary AS detail
  FROM pc_aps_adoptions
 WHERE adoption = 'profile_apscheduler';

-- already_supervised: the supervisor already checked this binding (a checkpoint or a scan exists):
-- its schedule state is the supervisor's, not the job store's.
SELECT 'already_supervised' AS problem, binding_name, NULL AS scope_id,
       'checkpoint ' || COALESCE(last_schedule_checkpoint_at, 'none') || ', scan generation ' || scan_generation AS detail
  FROM pc_artifact_processing_binding_states
 WHERE binding_name = :binding_name
   AND (last_schedule_checkpoint_at IS NOT NULL OR scan_generation > 0 OR scan_in_progress = 1);
