-- Down of 0003: drops the durable task tables (destroys every task) and restores the signal
-- trigger of 0001.
DROP TABLE IF EXISTS pc_durable_task_workers;
DROP TABLE IF EXISTS pc_durable_task_control;
DROP TABLE IF EXISTS pc_durable_tasks;
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
    ELSE RAISE(ABORT, 'unknown_signal')
  END;
END;
