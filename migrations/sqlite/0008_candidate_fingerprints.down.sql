-- Reverts 0008: drops the candidate fingerprints (a runtime of this version needs them).
DROP TABLE pc_aps_candidate_fingerprints;
