-- Adoption step 4 of topic-memory-pr1490 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11):
-- retire the PR #1490 scheduling state once the conversion (step 3,
-- pc_aps_adopt_topic_memory_pr1490) has committed, which it does only after its consistency
-- check of the new intents against the Topic pending, the cursors and the unfinished wave
-- targets passed. Drops the temporary auto-wave target table, the set-aside binding states (with
-- last_auto_wave_completed_at) and the set-aside lease; the plan then drops the conversion
-- procedure and its checksum record (as after every adoption). Kept:
-- pc_artifact_processing_pending (source_through, flush generations) and
-- pc_artifact_processing_source_cursors, which belong to Topic Memory's processor from now on.
DROP TABLE pc_artifact_processing_auto_wave_targets;
DROP TABLE pc_aps_pr1490_binding_states;
DROP TABLE pc_aps_pr1490_leases;
UPDATE pc_aps_adoptions SET state = 'retired', retired_at = UTC_TIMESTAMP(3)
 WHERE adoption = 'topic_memory_pr1490' AND state = 'converted';
