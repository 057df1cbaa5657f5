-- Reverts 0014: drops the ordinals and the counter row table of the set-based intake scripts.
DROP TABLE pc_aps_intake_batch_counter;
DROP TABLE pc_aps_batch_ordinals;
