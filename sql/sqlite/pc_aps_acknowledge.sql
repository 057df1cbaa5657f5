-- Operation: pc_aps_acknowledge   (MySQL twin: procedures/oceanbase/pc_aps_acknowledge.sql; TypeScript: Store.acknowledge)
-- Purpose: a worker's acknowledgement without business writes (a processor's ctx.acknowledge())
--   as one operation: the statements of sql/sqlite/pc_aps_ack_invocation.sql (included below by
--   the script loader, not copied) inside a transaction this script owns. Same semantics,
--   fencing and result as pc_aps_ack_invocation.
-- Transaction: BEGIN IMMEDIATE ... COMMIT.
-- Parameters:
--   :supervisor_key, :holder_id, :supervisor_generation   the worker's term
--   :binding_name, :scope_id
--   :claimed_request_generation       the requested generation read at start (>= 1)
--   :clean_through_dirty_generation   NULL, or the dirty generation of the start snapshot
-- Result: the row of pc_aps_ack_invocation.
-- Errors (message): those of pc_aps_ack_invocation; nothing is written when one is raised.
BEGIN IMMEDIATE;
-- @include pc_aps_ack_invocation
COMMIT;
