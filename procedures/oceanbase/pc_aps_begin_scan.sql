-- Operation: pc_aps_begin_scan   (SQLite twin: sql/sqlite/pc_aps_begin_scan.sql; TypeScript: Store.beginScan)
-- Purpose: fenced start (or resumption) of one automatic scan of a binding.
--   * A scan still in progress (scan_in_progress = 1) is resumed with its generation and upper
--     bound, whatever the policy: a taken-over or restarted supervisor finishes it.
--   * Otherwise a new scan starts only when due:
--       interval: never checked and the binding has ordinary work (dirty > clean), or
--                 UTC_TIMESTAMP(3) >= last_schedule_checkpoint_at + p_interval_seconds;
--                 the checkpoint becomes the database time of this start.
--       cron:     the caller passes the latest fire time <= database time that it computed from
--                 db_now (pc_aps_read_binding_state); due when never checked (first enabled check
--                 catches up at once) or the fire is after the checkpoint; missed fires merge into
--                 this one. The checkpoint becomes the fire time; it only moves forward.
--       off:      never starts a new scan (an unfinished one is still resumed).
--   * Starting increments scan_generation, sets scan_in_progress, stores the checkpoint and
--     scan_upper_pending_sequence = the binding's largest pending_sequence, all in one
--     transaction, so a successor knows an unfinished scan exists and where it ends.
-- Transaction: owns its transaction; the caller's fence row (pc_aps_assert_term, this connection's
--   fence slot) is locked for its duration, then the binding-state row.
-- Parameters:
--   p_supervisor_key, p_holder_id, p_supervisor_generation   the caller's term
--   p_binding_name      VARCHAR(128)
--   p_policy            VARCHAR(16)  'interval' | 'cron' | 'off'
--   p_interval_seconds  INT          > 0 for 'interval', ignored otherwise
--   p_cron_fire_at      DATETIME(3)  UTC fire time <= database time for 'cron', ignored otherwise
-- Result: one row (binding_name, outcome, scan_generation, scan_upper_pending_sequence,
--   scan_in_progress, last_schedule_checkpoint_at, next_due_at, db_now)
--   outcome: 'started' | 'resumed' | 'not_due'. next_due_at (interval only): checkpoint + interval,
--   NULL when never checked (due as soon as work exists) or for cron/off.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   term_lost            the caller's term is not the live one.
--   invalid_argument     unknown policy, non-positive interval, missing cron fire.
--   cron_fire_in_future  p_cron_fire_at is after the database time.
CREATE PROCEDURE pc_aps_begin_scan(
  IN p_supervisor_key        VARCHAR(191),
  IN p_holder_id             VARCHAR(128),
  IN p_supervisor_generation BIGINT,
  IN p_binding_name          VARCHAR(128),
  IN p_policy                VARCHAR(16),
  IN p_interval_seconds      INT,
  IN p_cron_fire_at          DATETIME(3)
)
BEGIN
  DECLARE v_now         DATETIME(3);
  DECLARE v_checkpoint  DATETIME(3) DEFAULT NULL;
  DECLARE v_generation  BIGINT DEFAULT 0;
  DECLARE v_in_progress INT DEFAULT 0;
  DECLARE v_upper       BIGINT DEFAULT NULL;
  DECLARE v_due         INT DEFAULT 0;
  DECLARE v_new_checkpoint DATETIME(3) DEFAULT NULL;
  DECLARE v_outcome     VARCHAR(16);
  DECLARE v_next_due    DATETIME(3) DEFAULT NULL;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_binding_name IS NULL OR p_binding_name = '' OR p_policy IS NULL
     OR p_policy NOT IN ('interval', 'cron', 'off')
     OR (p_policy = 'interval' AND (p_interval_seconds IS NULL OR p_interval_seconds <= 0))
     OR (p_policy = 'cron' AND p_cron_fire_at IS NULL) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  CALL pc_aps_assert_term(p_supervisor_key, p_holder_id, p_supervisor_generation);

  INSERT INTO pc_artifact_processing_binding_states (binding_name, updated_at)
  VALUES (p_binding_name, UTC_TIMESTAMP(3))
  ON DUPLICATE KEY UPDATE binding_name = binding_name;

  SELECT last_schedule_checkpoint_at, scan_generation, scan_in_progress, scan_upper_pending_sequence
    INTO v_checkpoint, v_generation, v_in_progress, v_upper
    FROM pc_artifact_processing_binding_states
   WHERE binding_name = p_binding_name
     FOR UPDATE;
  -- The clock is read once both row locks are held.
  SET v_now = UTC_TIMESTAMP(3);
  IF p_policy = 'cron' AND p_cron_fire_at > v_now THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'cron_fire_in_future';
  END IF;

  IF v_in_progress = 1 THEN
    SET v_outcome = 'resumed';
  ELSE
    IF p_policy = 'interval' THEN
      IF v_checkpoint IS NULL THEN
        SELECT COUNT(*) INTO v_due FROM (
          SELECT 1 FROM pc_artifact_processing_intents
           WHERE binding_name = p_binding_name AND has_ordinary_work = 1
           LIMIT 1) w;
      ELSEIF v_now >= DATE_ADD(v_checkpoint, INTERVAL p_interval_seconds SECOND) THEN
        SET v_due = 1;
      END IF;
      SET v_new_checkpoint = v_now;
    ELSEIF p_policy = 'cron' THEN
      IF v_checkpoint IS NULL OR p_cron_fire_at > v_checkpoint THEN
        SET v_due = 1;
      END IF;
      SET v_new_checkpoint = p_cron_fire_at;
    END IF;

    IF v_due = 1 THEN
      IF v_checkpoint IS NOT NULL AND v_new_checkpoint < v_checkpoint THEN
        SET v_new_checkpoint = v_checkpoint;
      END IF;
      SELECT COALESCE(MAX(pending_sequence), 0) INTO v_upper
        FROM pc_artifact_processing_intents
       WHERE binding_name = p_binding_name;
      SET v_generation = v_generation + 1;
      SET v_in_progress = 1;
      SET v_checkpoint = v_new_checkpoint;
      UPDATE pc_artifact_processing_binding_states
         SET scan_generation = v_generation, scan_in_progress = 1,
             scan_upper_pending_sequence = v_upper, last_schedule_checkpoint_at = v_checkpoint,
             scan_started_at = v_now, scan_finished_at = NULL, updated_at = v_now
       WHERE binding_name = p_binding_name;
      SET v_outcome = 'started';
    ELSE
      SET v_outcome = 'not_due';
    END IF;
  END IF;
  COMMIT;

  IF p_policy = 'interval' AND v_checkpoint IS NOT NULL THEN
    SET v_next_due = DATE_ADD(v_checkpoint, INTERVAL p_interval_seconds SECOND);
  END IF;
  SELECT p_binding_name AS binding_name, v_outcome AS outcome, v_generation AS scan_generation,
         v_upper AS scan_upper_pending_sequence, v_in_progress AS scan_in_progress,
         v_checkpoint AS last_schedule_checkpoint_at, v_next_due AS next_due_at, v_now AS db_now;
END
