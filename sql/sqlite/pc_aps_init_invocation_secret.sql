-- Operation: pc_aps_init_invocation_secret   (MySQL twin: procedures/oceanbase/pc_aps_init_invocation_secret.sql; TypeScript: Store.initInvocationSecret)
-- Purpose: on SQLite no secret is kept: the candidate is returned as it is. A processor's
--   statements cannot reach the acknowledgement here (the scripts are not callable from SQL, and
--   a statement that writes pc_artifact_processing_intents is refused by the engine check), so
--   the token of pc_aps_ack_invocation_token is not checked on SQLite.
-- Transaction: BEGIN IMMEDIATE ... COMMIT (as the procedure owns its transaction; nothing is written).
-- Parameters:
--   :candidate   64 hexadecimal characters
-- Result: one row (secret).
-- Errors: none.
BEGIN IMMEDIATE;
SELECT :candidate AS secret;
COMMIT;
