-- Database accounts of a deployment on MySQL 8 / MariaDB 10.11 / OceanBase 4.x (MySQL mode).
-- Replace the schema name `apsup`, the account names and the passwords, then run it as an
-- administrator (mysql -u root < ops/mysql-grants.sql). test/ops/mysql-grants.test.ts runs this
-- file as it is (names substituted) and then the migrations as the owner and the runtime as the
-- runtime account.
--
-- Two accounts (README "Database accounts"):
--   apsup_owner    runs `apsup migrate up|down|adopt`. It owns the schema and is the DEFINER of
--                  every procedure (SQL SECURITY DEFINER): keep the account, a procedure whose
--                  definer is dropped fails with ER 1449. Never used by the runtime.
--   apsup_runtime  runs `apsup run` / `apsup tasks ...` and the processors' worker processes.
--                  It reaches the supervisor's and the task system's tables (pc_*) ONLY through
--                  the procedures (EXECUTE): it has no INSERT/UPDATE/DELETE on them, so no write
--                  can go around the fencing. Business tables: grant what the processors need.
CREATE DATABASE IF NOT EXISTS apsup CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE USER IF NOT EXISTS 'apsup_owner'@'%' IDENTIFIED BY 'change-me-owner';
GRANT ALL PRIVILEGES ON apsup.* TO 'apsup_owner'@'%';

CREATE USER IF NOT EXISTS 'apsup_runtime'@'%' IDENTIFIED BY 'change-me-runtime';
-- Every operation of the runtime is a CALL of one of the schema's procedures.
GRANT EXECUTE ON apsup.* TO 'apsup_runtime'@'%';
-- Optional, for `apsup migrate status` / drift checks run as this account: MariaDB shows a
-- routine's body (information_schema.ROUTINES.ROUTINE_DEFINITION) only to its definer or to an
-- account with SELECT on mysql.proc; MySQL 8.0.20+ and MariaDB 11.3+ use SHOW_ROUTINE instead.
-- GRANT SELECT ON mysql.proc TO 'apsup_runtime'@'%';      -- MariaDB 10.11
-- GRANT SHOW_ROUTINE ON *.* TO 'apsup_runtime'@'%';        -- MySQL 8.0.20+

-- Business tables: what the processors read (ctx.read) and write (ctx.commit), per table, e.g.
-- GRANT SELECT, INSERT, UPDATE ON apsup.my_progress TO 'apsup_runtime'@'%';
-- The demo (`apsup start`, `apsup migrate up --with-demo`) only: its reference tables.
-- @demo-begin
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_topic_sources TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_topic_cursors TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_topic_digests TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_experience_items TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_experience_state TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_profile_signals TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_profile_cursors TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_profile_candidates TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_files TO 'apsup_runtime'@'%';
GRANT SELECT, INSERT, UPDATE, DELETE ON apsup.ref_datasets TO 'apsup_runtime'@'%';
-- @demo-end
