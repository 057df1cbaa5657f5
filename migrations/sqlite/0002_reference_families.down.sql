-- Down of 0002: drops the reference families' domain tables.
DROP TABLE IF EXISTS ref_profile_candidates;
DROP TABLE IF EXISTS ref_profile_cursors;
DROP TABLE IF EXISTS ref_profile_signals;
DROP TABLE IF EXISTS ref_experience_state;
DROP TABLE IF EXISTS ref_experience_items;
DROP TABLE IF EXISTS ref_topic_digests;
DROP TABLE IF EXISTS ref_topic_cursors;
DROP TABLE IF EXISTS ref_topic_sources;
