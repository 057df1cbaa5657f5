-- Operation: pc_aps_adopt_profile_apscheduler   (MySQL twin: procedures/oceanbase/pc_aps_adopt_profile_apscheduler.sql; TypeScript: adoptProfileApscheduler in src/migrations/adoption.ts)
-- Purpose: `apsup migrate adopt profile-apscheduler` (RFC 11, A13), in one transaction: hand the
--   Profile cron schedule over from the APScheduler sidecar's job store to the supervisor.
--   * The caller read the job in the preflight and computed :checkpoint_at from it and the
--     configured cron: the latest fire APScheduler already took (the fire before its
--     next_run_time), or NULL when no fire was taken yet (no job: first migration; paused job;
--     the first-enable catch-up still pending), which keeps Profile's immediate catch-up.
--     A missed next_run_time (<= now) therefore makes the fire due at once: one catch-up, never
--     one per missed fire; a future one waits for it. A fire already taken is never due again,
--     and the processor keys candidates by that fire, so it produces no second candidate for it.
--   * The job row must still be as the preflight saw it (absent, paused, or scheduled at
--     :expected_next_run_time), else nothing changes.
--   * Records the checkpoint in the binding state, deletes the Profile job from the job store (a
--     sidecar started by mistake finds nothing to run; the old and the new scheduler never both
--     own a fire) and records the adoption. Cursors, policies, candidates and signals are not
--     touched; sources that arrived before the switch are re-marked dirty by the family's
--     pending-work provider (run by the caller after this commits, and before every check).
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :binding_name            the Profile binding
--   :job_id                  APScheduler job id of the Profile cron job
--   :expected_job_state      'absent' | 'paused' | 'scheduled' (as read by the preflight)
--   :expected_next_run_time  the job's next_run_time (epoch seconds) when 'scheduled', else NULL
--   :checkpoint_at           'YYYY-MM-DD HH:MM:SS.SSS' UTC, <= database time, or NULL
-- Result: one row (binding_name, job_id, job_state, last_schedule_checkpoint_at, jobs_removed,
--   summary, db_now).
-- Errors (message):
--   invalid_argument       empty binding or job id, unknown job state, a scheduled state
--                          without next_run_time.
--   adoption_done          already recorded in pc_aps_adoptions.
--   adoption_conflict      the supervisor already checked this binding (checkpoint or scan).
--   adoption_inconsistent  the job row changed since the preflight read it.
--   cron_fire_in_future    :checkpoint_at is after the database time.
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :binding_name IS NULL OR :binding_name = '' OR :job_id IS NULL OR :job_id = ''
    OR :expected_job_state IS NULL OR :expected_job_state NOT IN ('absent', 'paused', 'scheduled')
    OR (:expected_job_state = 'scheduled' AND :expected_next_run_time IS NULL);
INSERT INTO pc_aps_signals (code)
SELECT 'adoption_done' WHERE EXISTS (SELECT 1 FROM pc_aps_adoptions WHERE adoption = 'profile_apscheduler');
INSERT INTO pc_aps_signals (code)
SELECT 'adoption_conflict'
 WHERE EXISTS (SELECT 1 FROM pc_artifact_processing_binding_states
                WHERE binding_name = :binding_name
                  AND (last_schedule_checkpoint_at IS NOT NULL OR scan_generation > 0 OR scan_in_progress = 1));
INSERT INTO pc_aps_signals (code)
SELECT 'adoption_inconsistent'
 WHERE (:expected_job_state = 'absent' AND EXISTS (SELECT 1 FROM apscheduler_jobs WHERE id = :job_id))
    OR (:expected_job_state = 'paused'
        AND NOT EXISTS (SELECT 1 FROM apscheduler_jobs WHERE id = :job_id AND next_run_time IS NULL))
    OR (:expected_job_state = 'scheduled'
        AND NOT EXISTS (SELECT 1 FROM apscheduler_jobs WHERE id = :job_id AND next_run_time = :expected_next_run_time));
INSERT INTO pc_aps_signals (code)
SELECT 'cron_fire_in_future'
 WHERE :checkpoint_at IS NOT NULL AND :checkpoint_at > strftime('%Y-%m-%d %H:%M:%f', 'now');
INSERT INTO pc_artifact_processing_binding_states (binding_name, last_schedule_checkpoint_at)
VALUES (:binding_name, :checkpoint_at)
ON CONFLICT (binding_name) DO UPDATE
   SET last_schedule_checkpoint_at = excluded.last_schedule_checkpoint_at,
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now');
DELETE FROM apscheduler_jobs WHERE id = :job_id;
INSERT INTO pc_aps_adoptions (adoption, state, summary)
VALUES ('profile_apscheduler', 'retired',
        'binding ' || :binding_name || ': job ' || :job_id || ' ' || :expected_job_state
        || CASE WHEN :expected_job_state = 'scheduled' THEN ' (next_run_time ' || :expected_next_run_time || ')' ELSE '' END
        || ' removed; checkpoint ' || COALESCE(:checkpoint_at, 'none (catch-up at the first check)'));
SELECT :binding_name AS binding_name, :job_id AS job_id, :expected_job_state AS job_state,
       (SELECT last_schedule_checkpoint_at FROM pc_artifact_processing_binding_states
         WHERE binding_name = :binding_name) AS last_schedule_checkpoint_at,
       CASE WHEN :expected_job_state = 'absent' THEN 0 ELSE 1 END AS jobs_removed,
       (SELECT summary FROM pc_aps_adoptions WHERE adoption = 'profile_apscheduler') AS summary,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now;
COMMIT;
