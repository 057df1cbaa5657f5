-- Reverts 0015: drops the work table of pc_task_succeed_batch.
DROP TABLE pc_task_succeed_batch_items;
