-- Adoption step 1 of topic-memory-pr1490 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): set
-- aside the two PR #1490 tables whose names the current schema takes. Nothing is dropped or
-- rewritten: the rows stay in pc_aps_pr1490_binding_states and pc_aps_pr1490_leases until the
-- conversion has passed its consistency check (then the retire step drops them). Runs only after
-- the preflight found no problem; one atomic RENAME. The Topic tables
-- pc_artifact_processing_pending and pc_artifact_processing_source_cursors keep their names:
-- they stay Topic Memory's own.
RENAME TABLE pc_artifact_processing_binding_states TO pc_aps_pr1490_binding_states,
             pc_artifact_processing_leases TO pc_aps_pr1490_leases;
