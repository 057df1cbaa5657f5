-- Operation: pc_task_read_capacity   (SQLite twin: sql/sqlite/pc_task_read_capacity.sql; TypeScript: TaskStore.readCapacity)
-- Purpose: the database claim cap of durable tasks (ADR T6) and how much of it is in use, for the web console.
--   The running count is the one the 'claims' row keeps (migration 0028's triggers, recounted
--   by pc_task_set_capacity); read without a lock, as a committed snapshot.
-- Transaction: none.
-- Parameters: none.
-- Result: one row (capacity, running, db_now); no row on a database without the 'claims' row.
-- Errors: none.
CREATE PROCEDURE pc_task_read_capacity()
BEGIN
  SELECT capacity, running, UTC_TIMESTAMP(3) AS db_now
    FROM pc_durable_task_control WHERE name = 'claims';
END
