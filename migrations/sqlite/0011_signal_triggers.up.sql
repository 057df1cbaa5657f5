-- Migration 0011 (SQLite): the signal trigger in a form SQLite 3.37 reads, so the stock sqlite3
-- shell of the distributions (Debian 12: 3.40) opens the database. Migration 0001's trigger used
-- RAISE with an expression (SQLite >= 3.47), which older shells reject as a malformed schema.
-- Now one trigger per stable code, each raising its code as a literal; the adapter maps the
-- message to a typed error as before (src/store/errors.ts). A code no trigger knows aborts with
-- 'unknown_signal'. A new code ships with a new migration adding its trigger
-- (test/sqlite-shell.test.ts checks every code the scripts raise has one).
DROP TRIGGER IF EXISTS pc_aps_signals_raise;
CREATE TRIGGER pc_aps_signal_term_lost BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'term_lost'
BEGIN
  SELECT RAISE(ABORT, 'term_lost');
END;
CREATE TRIGGER pc_aps_signal_scan_stale BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'scan_stale'
BEGIN
  SELECT RAISE(ABORT, 'scan_stale');
END;
CREATE TRIGGER pc_aps_signal_invalid_argument BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'invalid_argument'
BEGIN
  SELECT RAISE(ABORT, 'invalid_argument');
END;
CREATE TRIGGER pc_aps_signal_intent_not_found BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'intent_not_found'
BEGIN
  SELECT RAISE(ABORT, 'intent_not_found');
END;
CREATE TRIGGER pc_aps_signal_ack_beyond_request BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'ack_beyond_request'
BEGIN
  SELECT RAISE(ABORT, 'ack_beyond_request');
END;
CREATE TRIGGER pc_aps_signal_clean_beyond_dirty BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'clean_beyond_dirty'
BEGIN
  SELECT RAISE(ABORT, 'clean_beyond_dirty');
END;
CREATE TRIGGER pc_aps_signal_cron_fire_in_future BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'cron_fire_in_future'
BEGIN
  SELECT RAISE(ABORT, 'cron_fire_in_future');
END;
CREATE TRIGGER pc_aps_signal_attempt_lost BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'attempt_lost'
BEGIN
  SELECT RAISE(ABORT, 'attempt_lost');
END;
CREATE TRIGGER pc_aps_signal_task_not_found BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'task_not_found'
BEGIN
  SELECT RAISE(ABORT, 'task_not_found');
END;
CREATE TRIGGER pc_aps_signal_task_active BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'task_active'
BEGIN
  SELECT RAISE(ABORT, 'task_active');
END;
CREATE TRIGGER pc_aps_signal_cancel_requested BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'cancel_requested'
BEGIN
  SELECT RAISE(ABORT, 'cancel_requested');
END;
CREATE TRIGGER pc_aps_signal_mode_mismatch BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'mode_mismatch'
BEGIN
  SELECT RAISE(ABORT, 'mode_mismatch');
END;
CREATE TRIGGER pc_aps_signal_maintenance BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'maintenance'
BEGIN
  SELECT RAISE(ABORT, 'maintenance');
END;
CREATE TRIGGER pc_aps_signal_live_candidate BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'live_candidate'
BEGIN
  SELECT RAISE(ABORT, 'live_candidate');
END;
CREATE TRIGGER pc_aps_signal_adoption_done BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'adoption_done'
BEGIN
  SELECT RAISE(ABORT, 'adoption_done');
END;
CREATE TRIGGER pc_aps_signal_adoption_conflict BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'adoption_conflict'
BEGIN
  SELECT RAISE(ABORT, 'adoption_conflict');
END;
CREATE TRIGGER pc_aps_signal_adoption_inconsistent BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'adoption_inconsistent'
BEGIN
  SELECT RAISE(ABORT, 'adoption_inconsistent');
END;
CREATE TRIGGER pc_aps_signal_capacity_not_set BEFORE INSERT ON pc_aps_signals WHEN NEW.code = 'capacity_not_set'
BEGIN
  SELECT RAISE(ABORT, 'capacity_not_set');
END;
CREATE TRIGGER pc_aps_signal_unknown BEFORE INSERT ON pc_aps_signals
  WHEN NEW.code NOT IN ('term_lost', 'scan_stale', 'invalid_argument', 'intent_not_found', 'ack_beyond_request', 'clean_beyond_dirty', 'cron_fire_in_future', 'attempt_lost', 'task_not_found', 'task_active', 'cancel_requested', 'mode_mismatch', 'maintenance', 'live_candidate', 'adoption_done', 'adoption_conflict', 'adoption_inconsistent', 'capacity_not_set')
BEGIN
  SELECT RAISE(ABORT, 'unknown_signal');
END;
