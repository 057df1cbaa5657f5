-- Operation: pc_aps_assert_term   (SQLite twin: sql/sqlite/pc_aps_assert_term.sql; TypeScript: Store.assertTerm)
-- Purpose: fencing check for any business or control write. Locks the fence row of the
--   supervisor key for this connection's slot (CONNECTION_ID() MOD 32, SELECT ... FOR UPDATE) and
--   validates holder and generation on it, then reads the lease row WITHOUT a lock (a consistent
--   read of its last committed version) and validates holder, generation and expiry there
--   against the database clock (migration 0015).
-- Why this fences (COMPATIBILITY, fencing without renewal locks):
--   * Fence rows carry holder and generation only, and only a term change writes them: acquire
--     after expiry or of a free key, invalidate, mode switch, adoption. Each writes all 32 rows
--     with the lease row in one transaction, so it waits for the lock taken here until the
--     caller's transaction ends. A transaction that passed this check therefore either commits
--     while its term is still the current one (no other term can commit before it), or is
--     refused (the term change committed first: the fence row then shows the new term).
--   * Expiry lives only on the lease row, which renewal writes (and nothing else). The read here
--     takes no lock, so a renewal never waits for a business transaction, and this check never
--     waits for a renewal (it reads the last committed expiry, before or after that renewal:
--     both are valid for a live term, since a renewal never shortens a live term).
--   * A term that expired but was not taken over: refused here; a transaction that passed the
--     check just before expiry can still commit after it, but never after a takeover commits
--     (the takeover waits for the fence row). The server bounds how long such a transaction can
--     stay open (the store's session transaction bound, COMPATIBILITY).
-- Transaction: runs INSIDE the caller's transaction (never starts or commits one). Call it first
--   in the transaction, before the writes it protects. Called with autocommit on, it protects nothing.
-- Locks: the caller's fence row only; never the lease row (lock order, COMPATIBILITY).
-- Holder ids are compared as bytes (CAST ... AS BINARY): variables and parameters take the
--   database default collation, which may be case-insensitive (COMPATIBILITY, character set row).
-- Parameters:
--   p_supervisor_key        VARCHAR(191)  'global' or 'artifact:<family>'
--   p_holder_id             VARCHAR(128)  holder of the term the caller claims
--   p_supervisor_generation BIGINT        generation of the term the caller claims
-- Result: no result set.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   term_lost  the fence row or the lease row is missing, held by another holder, at another
--              generation, released (holder NULL), or the lease expired
--              (expires_at <= UTC_TIMESTAMP(3)).
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

  -- The fence row: locked until the caller's transaction ends (a term change waits for it).
  SELECT holder_id, supervisor_generation
    INTO v_holder, v_generation
    FROM pc_artifact_processing_lease_fences
   WHERE supervisor_key = p_supervisor_key
     AND fence_slot = CONNECTION_ID() MOD 32
     FOR UPDATE;
  IF v_found = 0
     OR p_holder_id IS NULL OR p_supervisor_generation IS NULL
     OR v_holder IS NULL OR CAST(v_holder AS BINARY) <> CAST(p_holder_id AS BINARY)
     OR v_generation <> p_supervisor_generation THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'term_lost';
  END IF;

  -- The lease row: read without a lock (renewal writes it and must never wait for this transaction).
  SET v_holder = NULL;
  SELECT holder_id, supervisor_generation, expires_at
    INTO v_holder, v_generation, v_expires
    FROM pc_artifact_processing_leases
   WHERE supervisor_key = p_supervisor_key;
  IF v_found = 0
     OR v_holder IS NULL OR CAST(v_holder AS BINARY) <> CAST(p_holder_id AS BINARY)
     OR v_generation <> p_supervisor_generation
     OR (v_expires IS NOT NULL AND v_expires <= UTC_TIMESTAMP(3)) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'term_lost';
  END IF;
END
