-- Migration 0042 down: the token-checked acknowledgement and its secret.
-- @drop-procedure pc_aps_ack_invocation_token
-- @drop-procedure pc_aps_init_invocation_secret
DROP TABLE pc_aps_invocation_secret;
