-- Operation: pc_aps_begin_scan   (MySQL twin: procedures/oceanbase/pc_aps_begin_scan.sql; TypeScript: Store.beginScan)
-- Purpose: fenced start (or resumption) of one automatic scan of a binding.
--   * A scan in progress is resumed with its generation and upper bound, whatever the policy.
--   * Otherwise a new scan starts only when due:
--       interval: never checked and the binding has ordinary work, or
--                 now >= last_schedule_checkpoint_at + :interval_seconds; checkpoint := now.
--       cron:     never checked (first enabled check catches up at once) or :cron_fire_at (the
--                 latest fire <= database time, computed by the caller from db_now) is after the
--                 checkpoint; checkpoint := the fire (only forward). Missed fires merge.
--       off:      never starts a new scan.
--   * Starting increments scan_generation, sets scan_in_progress, the checkpoint and
--     scan_upper_pending_sequence (largest pending_sequence of the binding) in one transaction.
-- Transaction: BEGIN IMMEDIATE ... COMMIT; the term is checked under the write lock.
-- Parameters:
--   :supervisor_key, :holder_id, :supervisor_generation   the caller's term
--   :binding_name
--   :policy            'interval' | 'cron' | 'off'
--   :interval_seconds  > 0 for 'interval'
--   :cron_fire_at      'YYYY-MM-DD HH:MM:SS.SSS' UTC, <= database time, for 'cron'
-- Result: one row (binding_name, outcome, scan_generation, scan_upper_pending_sequence,
--   scan_in_progress, last_schedule_checkpoint_at, next_due_at, db_now);
--   outcome 'started' | 'resumed' | 'not_due'; next_due_at = checkpoint + interval (interval only).
-- Errors (message):
--   term_lost, invalid_argument, cron_fire_in_future (as in the MySQL twin).
BEGIN IMMEDIATE;
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :binding_name IS NULL OR :binding_name = '' OR :policy IS NULL
    OR :policy NOT IN ('interval', 'cron', 'off')
    OR (:policy = 'interval' AND (:interval_seconds IS NULL OR :interval_seconds <= 0))
    OR (:policy = 'cron' AND :cron_fire_at IS NULL);
-- @include pc_aps_assert_term
INSERT INTO pc_aps_signals (code)
SELECT 'cron_fire_in_future'
 WHERE :policy = 'cron' AND :cron_fire_at > strftime('%Y-%m-%d %H:%M:%f', 'now');
INSERT INTO pc_artifact_processing_binding_states (binding_name)
VALUES (:binding_name)
ON CONFLICT (binding_name) DO NOTHING;
UPDATE pc_artifact_processing_binding_states
   SET scan_generation = scan_generation + 1,
       scan_in_progress = 1,
       scan_upper_pending_sequence = (
         SELECT COALESCE(MAX(pending_sequence), 0) FROM pc_artifact_processing_intents
          WHERE binding_name = :binding_name),
       last_schedule_checkpoint_at = CASE
         WHEN :policy = 'interval' THEN strftime('%Y-%m-%d %H:%M:%f', 'now')
         ELSE MAX(COALESCE(last_schedule_checkpoint_at, ''), :cron_fire_at) END,
       scan_started_at = strftime('%Y-%m-%d %H:%M:%f', 'now'),
       scan_finished_at = NULL,
       updated_at = strftime('%Y-%m-%d %H:%M:%f', 'now')
 WHERE binding_name = :binding_name
   AND scan_in_progress = 0
   AND (
     (:policy = 'interval' AND (
        (last_schedule_checkpoint_at IS NULL AND EXISTS (
           SELECT 1 FROM pc_artifact_processing_intents
            WHERE binding_name = :binding_name AND dirty_generation > clean_generation))
        OR (last_schedule_checkpoint_at IS NOT NULL
            AND strftime('%Y-%m-%d %H:%M:%f', last_schedule_checkpoint_at, '+' || :interval_seconds || ' seconds')
                <= strftime('%Y-%m-%d %H:%M:%f', 'now'))))
     OR (:policy = 'cron' AND (last_schedule_checkpoint_at IS NULL OR :cron_fire_at > last_schedule_checkpoint_at)));
SELECT binding_name,
       CASE WHEN changes() > 0 THEN 'started'
            WHEN scan_in_progress = 1 THEN 'resumed'
            ELSE 'not_due' END AS outcome,
       scan_generation,
       scan_upper_pending_sequence,
       scan_in_progress,
       last_schedule_checkpoint_at,
       CASE WHEN :policy = 'interval' AND last_schedule_checkpoint_at IS NOT NULL
            THEN strftime('%Y-%m-%d %H:%M:%f', last_schedule_checkpoint_at, '+' || :interval_seconds || ' seconds')
       END AS next_due_at,
       strftime('%Y-%m-%d %H:%M:%f', 'now') AS db_now
  FROM pc_artifact_processing_binding_states
 WHERE binding_name = :binding_name;
COMMIT;
