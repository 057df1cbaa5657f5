-- Operation: pc_aps_renew_term   (SQLite twin: sql/sqlite/pc_aps_renew_term.sql; TypeScript: Store.renewTerm)
-- Purpose: the live holder extends its lease. Writes the lease row only (expires_at, renewed_at):
--   since migration 0015 the fence rows carry holder and generation, which a renewal does not
--   change, so a renewal never waits for a fenced business transaction (they lock fence rows;
--   pc_aps_assert_term reads the expiry from the lease row without a lock). The generation never
--   changes on renewal. A term that has already expired cannot be renewed, even if nobody took it
--   over: the holder must stop dispatching and acquire again (which yields a new generation).
-- Locks: the lease row only (SELECT ... FOR UPDATE), the first lock of pc_aps_acquire_term and
--   pc_aps_invalidate_term too (COMPATIBILITY, lock order), so a renewal racing a takeover at
--   expiry waits for it and gets term_lost, never a deadlock. The term is validated on the locked
--   lease row with the clock read after the lock. It can wait only for another term procedure
--   of the same key (which holds the lease row while it waits for the fence rows of open fenced
--   transactions: a takeover of an EXPIRED term, or an invalidation, after which this renewal
--   gets term_lost anyway).
-- Transaction: owns its transaction. Do not call inside an open transaction.
-- Holder ids are compared as bytes (CAST ... AS BINARY): variables and parameters take the
--   database default collation, which may be case-insensitive (COMPATIBILITY, character set row).
-- Parameters:
--   p_supervisor_key        VARCHAR(191)
--   p_holder_id             VARCHAR(128)
--   p_supervisor_generation BIGINT        the generation the holder believes it has
--   p_ttl_ms                INT           new time to live from now, 1000 .. 3600000 ms
-- Result: one row (supervisor_key, holder_id, supervisor_generation, expires_at, outcome='renewed', db_now)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   term_lost         the caller no longer holds a live term at that generation (no lease row,
--                     another holder, another generation, released, or expired by the database clock).
--   invalid_argument  ttl out of range.
CREATE PROCEDURE pc_aps_renew_term(
  IN p_supervisor_key        VARCHAR(191),
  IN p_holder_id             VARCHAR(128),
  IN p_supervisor_generation BIGINT,
  IN p_ttl_ms                INT
)
BEGIN
  DECLARE v_found      INT DEFAULT 1;
  DECLARE v_now        DATETIME(3);
  DECLARE v_expires    DATETIME(3);
  DECLARE v_holder     VARCHAR(128) DEFAULT NULL;
  DECLARE v_generation BIGINT DEFAULT NULL;
  DECLARE v_current    DATETIME(3) DEFAULT NULL;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_ttl_ms IS NULL OR p_ttl_ms < 1000 OR p_ttl_ms > 3600000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  -- Lease row first (lock order), validated under its lock with the clock read after the lock.
  SELECT holder_id, supervisor_generation, expires_at
    INTO v_holder, v_generation, v_current
    FROM pc_artifact_processing_leases
   WHERE supervisor_key = p_supervisor_key
     FOR UPDATE;
  SET v_now = UTC_TIMESTAMP(3);
  IF v_found = 0
     OR p_holder_id IS NULL OR p_supervisor_generation IS NULL
     OR v_holder IS NULL OR CAST(v_holder AS BINARY) <> CAST(p_holder_id AS BINARY)
     OR v_generation <> p_supervisor_generation
     OR (v_current IS NOT NULL AND v_current <= v_now) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'term_lost';
  END IF;
  SET v_expires = DATE_ADD(v_now, INTERVAL p_ttl_ms * 1000 MICROSECOND);
  UPDATE pc_artifact_processing_leases
     SET expires_at = v_expires, renewed_at = v_now, updated_at = v_now
   WHERE supervisor_key = p_supervisor_key;
  COMMIT;

  SELECT p_supervisor_key AS supervisor_key, p_holder_id AS holder_id,
         p_supervisor_generation AS supervisor_generation, v_expires AS expires_at,
         'renewed' AS outcome, v_now AS db_now;
END
