-- Down of 0005: drops the recorded mode.
DROP TABLE IF EXISTS pc_artifact_processing_runtime;
