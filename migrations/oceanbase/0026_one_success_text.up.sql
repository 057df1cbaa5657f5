-- Migration 0026 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): one text of the success rules.
--
-- pc_task_succeed (changed, from 0024) no longer repeats pc_task_complete's checks and update:
-- it is START TRANSACTION, CALL pc_task_complete, COMMIT, with the exit handler's ROLLBACK and
-- RESIGNAL, as pc_aps_acknowledge wraps pc_aps_ack_invocation. Same rules, errors and row (now
-- pc_task_complete's, sent before the COMMIT; a failing COMMIT still ends the call with its
-- error). Irreversible by design (no down file): the previous text is not kept.

-- @procedure pc_task_succeed sha256=44ba8927a7bf4d6ba4fc65bc992f8e7399b72a6ee4845976015101eb8cebd5a7
