-- Reverts 0009: drops pc_durable_tasks.stop_verdict (a runtime of this version needs it).
ALTER TABLE pc_durable_tasks DROP COLUMN stop_verdict;
