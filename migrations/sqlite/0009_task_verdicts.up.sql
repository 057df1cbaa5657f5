-- Migration 0009 (SQLite): durable task verdicts; same column as migrations/oceanbase/0017.
--   stop_verdict  the verdict a runner reached for a running attempt ('timeout',
--                 'interrupted_by_shutdown'; sql/sqlite/pc_task_record_verdict.sql), read by
--                 pc_task_end_attempt, pc_task_expire_lost and pc_task_complete. NULL: none.
ALTER TABLE pc_durable_tasks ADD COLUMN stop_verdict TEXT NULL;
