-- Operation: pc_aps_assert_term   (SQLite twin: sql/sqlite/pc_aps_assert_term.sql; TypeScript: Store.assertTerm)
-- Purpose: fencing check for any business or control write. Locks the fence row of the
--   supervisor key for this connection's slot (CONNECTION_ID() MOD 32, SELECT ... FOR UPDATE)
--   and validates holder, generation and expiry against the database clock. Every term change
--   updates all 32 fence rows with the lease row in one transaction (migration 0007), so the
--   lock held here until the caller's transaction ends keeps any takeover from committing between
--   this check and the caller's writes, while fenced transactions of different slots do not
--   serialize on one row.
-- Transaction: runs INSIDE the caller's transaction (never starts or commits one). Call it first
--   in the transaction, before the writes it protects. Called with autocommit on, it protects nothing.
-- Holder ids are compared as bytes (CAST ... AS BINARY): variables and parameters take the
--   database default collation, which may be case-insensitive (COMPATIBILITY, character set row).
-- Parameters:
--   p_supervisor_key        VARCHAR(191)  'global' or 'artifact:<family>'
--   p_holder_id             VARCHAR(128)  holder of the term the caller claims
--   p_supervisor_generation BIGINT        generation of the term the caller claims
-- Result: no result set.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   term_lost  the fence row is missing, held by another holder, at another generation,
--              released (holder NULL) or expired (expires_at <= UTC_TIMESTAMP(3)).
CREATE PROCEDURE pc_aps_assert_term(
  IN p_supervisor_key        VARCHAR(191),
  IN p_holder_id             VARCHAR(128),
  IN p_supervisor_generation BIGINT
)
BEGIN
  DECLARE v_found      INT DEFAULT 1;
  DECLARE v_holder     VARCHAR(128) DEFAULT NULL;
  DECLARE v_generation BIGINT DEFAULT NULL;
  DECLARE v_expires    DATETIME(3) DEFAULT NULL;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;

  SELECT holder_id, supervisor_generation, expires_at
    INTO v_holder, v_generation, v_expires
    FROM pc_artifact_processing_lease_fences
   WHERE supervisor_key = p_supervisor_key
     AND fence_slot = CONNECTION_ID() MOD 32
     FOR UPDATE;

  IF v_found = 0
     OR p_holder_id IS NULL OR p_supervisor_generation IS NULL
     OR v_holder IS NULL OR CAST(v_holder AS BINARY) <> CAST(p_holder_id AS BINARY)
     OR v_generation <> p_supervisor_generation
     OR (v_expires IS NOT NULL AND v_expires <= UTC_TIMESTAMP(3)) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'term_lost';
  END IF;
END
