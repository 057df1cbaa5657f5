DROP TABLE pc_aps_ack_batch_items;
