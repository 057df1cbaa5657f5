DROP TABLE pc_aps_adoptions;
