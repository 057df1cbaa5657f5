-- Down of 0003: drops the durable task tables (destroys every task).
DROP VIEW IF EXISTS pc_durable_task_live_attempts;
DROP TABLE IF EXISTS pc_durable_task_workers;
DROP TABLE IF EXISTS pc_durable_task_control;
DROP TABLE IF EXISTS pc_durable_tasks;
