-- Down of 0001: drops the supervisor tables. Destroys all intents, scan state and terms:
-- only for an empty or disposable database.
DROP TRIGGER IF EXISTS pc_aps_signals_raise;
DROP TABLE IF EXISTS pc_aps_signals;
DROP VIEW IF EXISTS pc_artifact_processing_live_terms;
DROP TABLE IF EXISTS pc_artifact_processing_binding_states;
DROP TABLE IF EXISTS pc_artifact_processing_intents;
DROP TABLE IF EXISTS pc_artifact_processing_leases;
