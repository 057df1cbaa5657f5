-- Operation: pc_aps_write_fences   (MySQL only, no SQLite twin or Store method: SQLite fences by its database write lock)
-- Purpose: the one writer of fence rows. Sets all 32 fence rows of a supervisor key
--   (pc_artifact_processing_lease_fences, one per pc_artifact_processing_fence_slots row; missing
--   rows are created) to the given holder and generation; expires_at is cleared (expiry lives on
--   the lease row only since migration 0015). Every term change calls it under the lease row
--   lock (pc_aps_acquire_term on takeover, pc_aps_invalidate_term, pc_aps_switch_mode, the PR
--   #1490 adoption), so it waits for every open fenced transaction of the key (each holds its
--   fence row FOR UPDATE, see pc_aps_assert_term) and none of the old term commits after it.
-- Transaction: runs INSIDE the caller's transaction (no START TRANSACTION, COMMIT or handler:
--   an error reaches the caller's EXIT HANDLER, which rolls back).
-- Parameters:
--   p_supervisor_key         VARCHAR(191)  'global' or 'artifact:<family>'
--   p_holder_id              VARCHAR(128)  the new holder, NULL when the term is ended
--   p_supervisor_generation  BIGINT        the new generation (that of the lease row)
-- Result: none.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  missing key or generation.
CREATE PROCEDURE pc_aps_write_fences(
  IN p_supervisor_key        VARCHAR(191),
  IN p_holder_id             VARCHAR(128),
  IN p_supervisor_generation BIGINT
)
BEGIN
  IF p_supervisor_key IS NULL OR p_supervisor_key = '' OR p_supervisor_generation IS NULL THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  INSERT INTO pc_artifact_processing_lease_fences (supervisor_key, fence_slot, holder_id, supervisor_generation, expires_at)
  SELECT p_supervisor_key, s.fence_slot, p_holder_id, p_supervisor_generation, NULL
    FROM pc_artifact_processing_fence_slots s
  ON DUPLICATE KEY UPDATE holder_id = p_holder_id, supervisor_generation = p_supervisor_generation, expires_at = NULL;
END
