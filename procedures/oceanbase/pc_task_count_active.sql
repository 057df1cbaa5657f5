-- Operation: pc_task_count_active   (SQLite twin: sql/sqlite/pc_task_count_active.sql; TypeScript: TaskStore.countActive)
-- Purpose: active tasks (pending, running) per state and task type for /metrics, bounded: at
--   most p_cap rows are read (a range on the (state, task_id) index), so a scrape costs the same
--   with a backlog of millions; the caller reports the counts as capped when their sum reaches
--   p_cap. Terminal tasks are not counted here (they accumulate until pruned); the runner counts
--   ended attempts instead.
-- Transaction: none (a plain read).
-- Parameters: p_cap INT (1 .. 1000000)
-- Result: rows (state, task_type, n)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): invalid_argument.
CREATE PROCEDURE pc_task_count_active(
  IN p_cap INT
)
BEGIN
  IF p_cap IS NULL OR p_cap < 1 OR p_cap > 1000000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SELECT d.state, d.task_type, COUNT(*) AS n
    FROM (SELECT state, task_type FROM pc_durable_tasks
           WHERE state IN ('pending', 'running') LIMIT p_cap) AS d
   GROUP BY d.state, d.task_type;
END
