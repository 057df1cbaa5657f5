-- Operation: pc_task_submit   (MySQL twin: procedures/oceanbase/pc_task_submit.sql; TypeScript: TaskStore.submit)
-- Purpose: persist the execution intent of a durable task ('pending'), claimable once the
--   caller's transaction commits. An active task with the same dedupe key is returned instead
--   (outcome 'duplicate'); the partial UNIQUE index uk_pc_dt_active_dedupe enforces it.
-- Transaction: runs INSIDE the caller's transaction; called alone, the runner wraps it in
--   BEGIN IMMEDIATE ... COMMIT.
-- Parameters: :task_type, :handler_version (0 = legacy), :payload (JSON), :dedupe_key (NULL),
--   :timeout_ms (> 0), :resumed_from_task_id (NULL)
-- Result: one row (task_id, state, outcome 'created' | 'duplicate', dedupe_key)
-- Errors (message): invalid_argument.
INSERT INTO pc_aps_signals (code)
SELECT 'invalid_argument'
 WHERE :task_type IS NULL OR :task_type = '' OR :handler_version IS NULL OR :handler_version < 0
    OR :timeout_ms IS NULL OR :timeout_ms <= 0 OR :payload IS NULL;
INSERT INTO pc_durable_tasks (task_type, handler_version, payload, state, dedupe_key, timeout_ms, resumed_from_task_id)
SELECT :task_type, :handler_version, :payload, 'pending', :dedupe_key, :timeout_ms, :resumed_from_task_id
 WHERE :dedupe_key IS NULL
    OR NOT EXISTS (SELECT 1 FROM pc_durable_tasks WHERE dedupe_key = :dedupe_key AND state IN ('pending', 'running'));
SELECT task_id, state, 'created' AS outcome, dedupe_key
  FROM pc_durable_tasks WHERE changes() > 0 AND task_id = last_insert_rowid()
UNION ALL
SELECT task_id, state, 'duplicate' AS outcome, dedupe_key
  FROM pc_durable_tasks WHERE changes() = 0 AND dedupe_key = :dedupe_key AND state IN ('pending', 'running');
