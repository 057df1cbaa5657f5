-- Migration 0025 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): one text of the claim rules.
--
-- pc_task_claim (changed) becomes CALL pc_task_claim_batch(worker, lease, types, 1): the cap
-- under the claims row lock, the non-locking candidate read, the update guarded by
-- state = 'pending' and the read-back by primary key are pc_task_claim_batch's (0023, 0024), so
-- a DBA reviews them once and they cannot drift apart. Same result (zero or one row, the same
-- columns) and errors; a candidate cancelled between read and update is now skipped up to four
-- times instead of three. Irreversible by design (no down file): the previous text is not kept.

-- @procedure pc_task_claim sha256=8f3039adffef51e0402f42acef24c0db0b700be8bca2abc8bcfedb742ae8b4cb
