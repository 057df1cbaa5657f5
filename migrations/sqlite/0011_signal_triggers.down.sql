-- Reverts migration 0011: back to migration 0001's single trigger (needs SQLite >= 3.47 to read).
DROP TRIGGER IF EXISTS pc_aps_signal_term_lost;
DROP TRIGGER IF EXISTS pc_aps_signal_scan_stale;
DROP TRIGGER IF EXISTS pc_aps_signal_invalid_argument;
DROP TRIGGER IF EXISTS pc_aps_signal_intent_not_found;
DROP TRIGGER IF EXISTS pc_aps_signal_ack_beyond_request;
DROP TRIGGER IF EXISTS pc_aps_signal_clean_beyond_dirty;
DROP TRIGGER IF EXISTS pc_aps_signal_cron_fire_in_future;
DROP TRIGGER IF EXISTS pc_aps_signal_attempt_lost;
DROP TRIGGER IF EXISTS pc_aps_signal_task_not_found;
DROP TRIGGER IF EXISTS pc_aps_signal_task_active;
DROP TRIGGER IF EXISTS pc_aps_signal_cancel_requested;
DROP TRIGGER IF EXISTS pc_aps_signal_mode_mismatch;
DROP TRIGGER IF EXISTS pc_aps_signal_maintenance;
DROP TRIGGER IF EXISTS pc_aps_signal_live_candidate;
DROP TRIGGER IF EXISTS pc_aps_signal_adoption_done;
DROP TRIGGER IF EXISTS pc_aps_signal_adoption_conflict;
DROP TRIGGER IF EXISTS pc_aps_signal_adoption_inconsistent;
DROP TRIGGER IF EXISTS pc_aps_signal_capacity_not_set;
DROP TRIGGER IF EXISTS pc_aps_signal_unknown;
CREATE TRIGGER pc_aps_signals_raise BEFORE INSERT ON pc_aps_signals
BEGIN
  SELECT RAISE(ABORT, NEW.code);
END;
