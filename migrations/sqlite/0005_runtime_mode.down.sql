-- Down of 0005: drops the recorded mode and restores the signal trigger of 0003.
DROP TABLE IF EXISTS pc_artifact_processing_runtime;
DROP TRIGGER pc_aps_signals_raise;
CREATE TRIGGER pc_aps_signals_raise BEFORE INSERT ON pc_aps_signals
BEGIN
  SELECT CASE NEW.code
    WHEN 'term_lost'           THEN RAISE(ABORT, 'term_lost')
    WHEN 'scan_stale'          THEN RAISE(ABORT, 'scan_stale')
    WHEN 'invalid_argument'    THEN RAISE(ABORT, 'invalid_argument')
    WHEN 'intent_not_found'    THEN RAISE(ABORT, 'intent_not_found')
    WHEN 'ack_beyond_request'  THEN RAISE(ABORT, 'ack_beyond_request')
    WHEN 'clean_beyond_dirty'  THEN RAISE(ABORT, 'clean_beyond_dirty')
    WHEN 'cron_fire_in_future' THEN RAISE(ABORT, 'cron_fire_in_future')
    WHEN 'attempt_lost'        THEN RAISE(ABORT, 'attempt_lost')
    WHEN 'task_not_found'      THEN RAISE(ABORT, 'task_not_found')
    WHEN 'task_active'         THEN RAISE(ABORT, 'task_active')
    ELSE RAISE(ABORT, 'unknown_signal')
  END;
END;
