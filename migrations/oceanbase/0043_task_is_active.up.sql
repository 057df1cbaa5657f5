-- Migration 0043 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): a handler asks whether a task
-- is active through an operation (issue 40).
--
-- The reference handlers read pc_durable_tasks inside their commit to learn whether the task
-- owning a domain row is still active. A handler's account has no privilege on that table (and
-- the statement checks refuse naming it), so the one fact it needs is now an operation, granted
-- to the processor account (ops/mysql-grants.sql; the derived accounts at the next start).
-- pc_task_is_active (new).

-- @procedure pc_task_is_active sha256=54bd666cf54367c58cffe7fc5623a0ef7d19cd1422ead123d06ba24089cbe080
