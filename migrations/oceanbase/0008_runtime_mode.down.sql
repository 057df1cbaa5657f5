-- Down of 0008: drops the runtime mode procedures and the recorded mode.
-- @drop-procedure pc_aps_read_family_backlog
-- @drop-procedure pc_aps_switch_mode
-- @drop-procedure pc_aps_claim_runtime_mode
-- @drop-procedure pc_aps_read_runtime_mode
DROP TABLE IF EXISTS pc_artifact_processing_runtime;
