-- Reverts 0012: drops the work tables of the batched intake scripts.
DROP TABLE pc_task_submit_batch_items;
DROP TABLE pc_aps_intake_batch_items;
