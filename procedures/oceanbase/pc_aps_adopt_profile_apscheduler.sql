-- Operation: pc_aps_adopt_profile_apscheduler   (SQLite twin: sql/sqlite/pc_aps_adopt_profile_apscheduler.sql; TypeScript: adoptProfileApscheduler in src/migrations/adoption.ts)
-- Purpose: `apsup migrate adopt profile-apscheduler` (RFC 11, A13), in one transaction: hand the
--   Profile cron schedule over from the APScheduler sidecar's job store to the supervisor.
--   * The caller read the job in the preflight and computed p_checkpoint_at from it and the
--     configured cron: the latest fire APScheduler already took (the fire before its
--     next_run_time), or NULL when no fire was taken yet (no job: first migration; paused job;
--     the first-enable catch-up still pending), which keeps Profile's immediate catch-up.
--     A missed next_run_time (<= now) therefore makes the fire due at once: one catch-up, never
--     one per missed fire; a future one waits for it. A fire already taken is never due again,
--     and the processor keys candidates by that fire, so it produces no second candidate for it.
--   * The job row must still be as the preflight saw it (absent, paused, or scheduled at
--     p_expected_next_run_time), else nothing changes.
--   * Records the checkpoint in the binding state, deletes the Profile job from the job store (a
--     sidecar started by mistake finds nothing to run; the old and the new scheduler never both
--     own a fire) and records the adoption. Cursors, policies, candidates and signals are not
--     touched; sources that arrived before the switch are re-marked dirty by the family's
--     pending-work provider (run by the caller after this commits, and before every check).
-- Transaction: owns its transaction (do not call inside an open one); the job row and the
--   binding state row are locked FOR UPDATE. Installed by the adoption plan right before it
--   runs (it reads apscheduler_jobs, which exists only in a database being adopted) and dropped
--   right after.
-- Parameters:
--   p_binding_name            VARCHAR(191)  the Profile binding
--   p_job_id                  VARCHAR(191)  APScheduler job id of the Profile cron job
--   p_expected_job_state      VARCHAR(16)   'absent' | 'paused' | 'scheduled' (as read by the preflight)
--   p_expected_next_run_time  DOUBLE        the job's next_run_time (epoch seconds) when 'scheduled', else NULL
--   p_checkpoint_at           DATETIME(3)   UTC, <= database time, or NULL
-- Result: one row (binding_name, job_id, job_state, last_schedule_checkpoint_at, jobs_removed,
--   summary, db_now).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument       empty binding or job id, unknown job state, a scheduled state
--                          without next_run_time.
--   adoption_done          already recorded in pc_aps_adoptions.
--   adoption_conflict      the supervisor already checked this binding (checkpoint or scan).
--   adoption_inconsistent  the job row changed since the preflight read it.
--   cron_fire_in_future    p_checkpoint_at is after the database time.
CREATE PROCEDURE pc_aps_adopt_profile_apscheduler(
  IN p_binding_name           VARCHAR(191),
  IN p_job_id                 VARCHAR(191),
  IN p_expected_job_state     VARCHAR(16),
  IN p_expected_next_run_time DOUBLE,
  IN p_checkpoint_at          DATETIME(3)
)
BEGIN
  DECLARE v_now     DATETIME(3);
  DECLARE v_jobs    BIGINT DEFAULT 0;
  DECLARE v_next    DOUBLE DEFAULT NULL;
  DECLARE v_summary VARCHAR(1024);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_binding_name IS NULL OR p_binding_name = '' OR p_job_id IS NULL OR p_job_id = ''
     OR p_expected_job_state IS NULL OR p_expected_job_state NOT IN ('absent', 'paused', 'scheduled')
     OR (p_expected_job_state = 'scheduled' AND p_expected_next_run_time IS NULL) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  INSERT INTO pc_artifact_processing_binding_states (binding_name, updated_at)
  VALUES (p_binding_name, UTC_TIMESTAMP(3))
  ON DUPLICATE KEY UPDATE binding_name = binding_name;
  SELECT COUNT(*) INTO v_jobs
    FROM pc_artifact_processing_binding_states
   WHERE binding_name = p_binding_name
     AND (last_schedule_checkpoint_at IS NOT NULL OR scan_generation > 0 OR scan_in_progress = 1)
     FOR UPDATE;
  SET v_now = UTC_TIMESTAMP(3);
  IF EXISTS (SELECT 1 FROM pc_aps_adoptions WHERE adoption = 'profile_apscheduler') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'adoption_done';
  END IF;
  IF v_jobs > 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'adoption_conflict';
  END IF;

  SET v_jobs = 0;
  SELECT COUNT(*), MAX(next_run_time) INTO v_jobs, v_next
    FROM apscheduler_jobs
   WHERE id = p_job_id
     FOR UPDATE;
  IF (p_expected_job_state = 'absent' AND v_jobs > 0)
     OR (p_expected_job_state = 'paused' AND (v_jobs = 0 OR v_next IS NOT NULL))
     OR (p_expected_job_state = 'scheduled' AND (v_jobs = 0 OR v_next IS NULL OR v_next <> p_expected_next_run_time)) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'adoption_inconsistent';
  END IF;
  IF p_checkpoint_at IS NOT NULL AND p_checkpoint_at > v_now THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'cron_fire_in_future';
  END IF;

  UPDATE pc_artifact_processing_binding_states
     SET last_schedule_checkpoint_at = p_checkpoint_at, updated_at = v_now
   WHERE binding_name = p_binding_name;
  DELETE FROM apscheduler_jobs WHERE id = p_job_id;
  SET v_summary = CONCAT('binding ', p_binding_name, ': job ', p_job_id, ' ', p_expected_job_state,
                         CASE WHEN p_expected_job_state = 'scheduled'
                              THEN CONCAT(' (next_run_time ', p_expected_next_run_time, ')') ELSE '' END,
                         ' removed; checkpoint ',
                         COALESCE(CAST(p_checkpoint_at AS CHAR), 'none (catch-up at the first check)'));
  INSERT INTO pc_aps_adoptions (adoption, state, summary, converted_at)
  VALUES ('profile_apscheduler', 'retired', v_summary, v_now);
  COMMIT;

  SELECT p_binding_name AS binding_name, p_job_id AS job_id, p_expected_job_state AS job_state,
         p_checkpoint_at AS last_schedule_checkpoint_at,
         CASE WHEN p_expected_job_state = 'absent' THEN 0 ELSE 1 END AS jobs_removed,
         v_summary AS summary, v_now AS db_now;
END
