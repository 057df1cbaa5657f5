-- Database accounts of a deployment on MySQL 8 / MariaDB 10.11 / OceanBase 4.x (MySQL mode).
-- Replace the schema name `apsup`, the account names and the passwords, then run it as an
-- administrator (mysql -u root < ops/mysql-grants.sql). test/ops/mysql-grants.test.ts runs this
-- file as it is (names substituted) and then the migrations as the owner and the runtime as the
-- runtime account.
--
-- Four accounts (README "Database accounts"):
--   apsup_owner    runs `apsup migrate up|down|adopt`. It owns the schema and is the DEFINER of
--                  every procedure (SQL SECURITY DEFINER): keep the account, a procedure whose
--                  definer is dropped fails with ER 1449. Never used by the runtime.
--   apsup_runtime  runs `apsup run` / `apsup tasks ...` and the processors' worker processes.
--                  It reaches the supervisor's and the task system's tables (pc_*) ONLY through
--                  the procedures (EXECUTE): it has no INSERT/UPDATE/DELETE on them, so no write
--                  can go around the fencing. It never runs a processor's statements: the
--                  host gives its worker children the two accounts below, never its own.
--                  Business tables: what the host runs itself (durable tasks' intent hooks at
--                  submit, failure hooks of lost or cancelled attempts) and pending-work reads.
--   apsup_processor  the sessions of processors' ctx.commit and task handlers' commits and hooks
--                  in worker processes: DML on business tables, EXECUTE on the eleven procedures a
--                  commit needs (the term or attempt token checked inside the same
--                  transaction), nothing on any pc_* table, no global privilege (no FILE).
--   apsup_reader   the sessions of ctx.read: SELECT on business tables only. A session that lifts
--                  its own READ ONLY setting still cannot write.
-- Run `apsup run` with
--   POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL=mysql://apsup_runtime:...@host/apsup
--   POWERCONTEXT_SERVER_RUNTIME_PROCESSOR_DATABASE_URL=mysql://apsup_processor:...@host/apsup
--   POWERCONTEXT_SERVER_RUNTIME_READER_DATABASE_URL=mysql://apsup_reader:...@host/apsup
-- and check `apsup db accounts --check` (or the start-up line "fencing: enforced by grants").
CREATE DATABASE IF NOT EXISTS apsup CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE USER IF NOT EXISTS 'apsup_owner'@'%' IDENTIFIED BY 'change-me-owner';
GRANT ALL PRIVILEGES ON apsup.* TO 'apsup_owner'@'%';

CREATE USER IF NOT EXISTS 'apsup_runtime'@'%' IDENTIFIED BY 'change-me-runtime';
-- Every operation of the runtime is a CALL of one of the schema's procedures.
GRANT EXECUTE ON apsup.* TO 'apsup_runtime'@'%';
-- To see which sessions a takeover waits for, and end a stale fenced transaction of a paused
-- leader's worker (INNODB_LOCK_WAITS / performance_schema.data_lock_waits; README "Database
-- accounts"). Without it the takeover waits for that transaction to end by itself.
GRANT PROCESS ON *.* TO 'apsup_runtime'@'%';
CREATE USER IF NOT EXISTS 'apsup_processor'@'%' IDENTIFIED BY 'change-me-processor';
CREATE USER IF NOT EXISTS 'apsup_reader'@'%' IDENTIFIED BY 'change-me-reader';

-- Optional, for `apsup migrate status` / drift checks run as this account: MariaDB shows a
-- routine's body (information_schema.ROUTINES.ROUTINE_DEFINITION) only to its definer or to an
-- account with SELECT on mysql.proc; MySQL 8.0.20+ and MariaDB 11.3+ use SHOW_ROUTINE instead.
-- GRANT SELECT ON mysql.proc TO 'apsup_runtime'@'%';      -- MariaDB 10.11
-- GRANT SHOW_ROUTINE ON *.* TO 'apsup_runtime'@'%';        -- MySQL 8.0.20+

-- After `apsup migrate up` as apsup_owner (the procedures and tables must exist to be granted).
-- @after-migrations
-- The adoption ledger, read at start-up (RFC 11: an adopted APScheduler job must not run twice).
GRANT SELECT ON apsup.pc_aps_adoptions TO 'apsup_runtime'@'%';
-- The procedures a processor's or a task handler's commit calls, and nothing else. (Upgrading
-- from before migration 0042: REVOKE EXECUTE ON PROCEDURE apsup.pc_aps_ack_invocation FROM
-- 'apsup_processor'@'%'; its acknowledgement now needs the host's token.)
GRANT EXECUTE ON PROCEDURE apsup.pc_aps_read_intent TO 'apsup_processor'@'%';
GRANT EXECUTE ON PROCEDURE apsup.pc_aps_read_binding_state TO 'apsup_processor'@'%';
GRANT EXECUTE ON PROCEDURE apsup.pc_aps_begin_fenced TO 'apsup_processor'@'%';
GRANT EXECUTE ON PROCEDURE apsup.pc_aps_ack_invocation_token TO 'apsup_processor'@'%';
GRANT EXECUTE ON PROCEDURE apsup.pc_task_assert_attempt TO 'apsup_processor'@'%';
GRANT EXECUTE ON PROCEDURE apsup.pc_task_heartbeat TO 'apsup_processor'@'%';
GRANT EXECUTE ON PROCEDURE apsup.pc_task_progress TO 'apsup_processor'@'%';
GRANT EXECUTE ON PROCEDURE apsup.pc_task_complete TO 'apsup_processor'@'%';
GRANT EXECUTE ON PROCEDURE apsup.pc_task_fail TO 'apsup_processor'@'%';
GRANT EXECUTE ON PROCEDURE apsup.pc_task_finish_cancelled TO 'apsup_processor'@'%';
GRANT EXECUTE ON PROCEDURE apsup.pc_task_is_active TO 'apsup_processor'@'%';

-- Business tables, per table: what the processors write (ctx.commit) and read (ctx.read), and
-- what the host's hooks write, e.g.
-- GRANT SELECT, INSERT, UPDATE ON apsup.my_progress TO 'apsup_processor'@'%';
-- GRANT SELECT ON apsup.my_progress TO 'apsup_reader'@'%';
-- GRANT SELECT, INSERT, UPDATE ON apsup.my_progress TO 'apsup_runtime'@'%';
-- Never a schema-wide grant (apsup.*) to the processor or the reader: it would cover the pc_*
-- tables, and the runtime reports "filtered only" then.
-- The demo (`apsup start`, `apsup migrate up --with-demo`) only: its reference tables.
-- @demo-begin
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_topic_sources TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_topic_sources TO 'apsup_processor'@'%';
GRANT SELECT ON apsup.ref_topic_sources TO 'apsup_reader'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_topic_cursors TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_topic_cursors TO 'apsup_processor'@'%';
GRANT SELECT ON apsup.ref_topic_cursors TO 'apsup_reader'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_topic_digests TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_topic_digests TO 'apsup_processor'@'%';
GRANT SELECT ON apsup.ref_topic_digests TO 'apsup_reader'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_experience_items TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_experience_items TO 'apsup_processor'@'%';
GRANT SELECT ON apsup.ref_experience_items TO 'apsup_reader'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_experience_state TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_experience_state TO 'apsup_processor'@'%';
GRANT SELECT ON apsup.ref_experience_state TO 'apsup_reader'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_profile_signals TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_profile_signals TO 'apsup_processor'@'%';
GRANT SELECT ON apsup.ref_profile_signals TO 'apsup_reader'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_profile_cursors TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_profile_cursors TO 'apsup_processor'@'%';
GRANT SELECT ON apsup.ref_profile_cursors TO 'apsup_reader'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_profile_candidates TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_profile_candidates TO 'apsup_processor'@'%';
GRANT SELECT ON apsup.ref_profile_candidates TO 'apsup_reader'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_files TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_files TO 'apsup_processor'@'%';
GRANT SELECT ON apsup.ref_files TO 'apsup_reader'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_datasets TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_datasets TO 'apsup_processor'@'%';
GRANT SELECT ON apsup.ref_datasets TO 'apsup_reader'@'%';
-- @demo-end
