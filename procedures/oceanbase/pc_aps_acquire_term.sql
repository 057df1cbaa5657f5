-- Operation: pc_aps_acquire_term   (SQLite twin: sql/sqlite/pc_aps_acquire_term.sql; TypeScript: Store.acquireTerm)
-- Purpose: a candidate tries to take the term of a supervisor key. Atomic under the lease row
--   lock: a free lease (holder NULL) or an expired one (expires_at <= UTC_TIMESTAMP(3)) is taken
--   over and supervisor_generation is incremented, so a holder that lost the lease and wins it
--   again gets a new generation (no ABA). The live holder calling again only extends its expiry
--   (generation unchanged). Any other caller gets outcome 'standby': not an error.
-- Fencing (migration 0015, COMPATIBILITY, fencing without renewal locks): a takeover writes the
--   new holder and generation to all 32 fence rows of the key in its transaction (pc_aps_write_fences), so it waits
--   for every open fenced transaction of the old term (each holds its fence row FOR UPDATE, see
--   pc_aps_assert_term) and commits only after they ended; once it commits, every later
--   assertion of the old term fails. The new expiry is computed from the clock read AFTER that
--   wait, so the new term gets its full TTL. The live holder's extension ('renewed') writes the
--   lease row only, like pc_aps_renew_term, and never waits for a fenced transaction; a
--   'standby' answer writes nothing.
-- Transaction: owns its transaction (START TRANSACTION ... COMMIT). Do not call inside an open
--   transaction: START TRANSACTION would commit it implicitly.
-- Holder ids are compared as bytes (CAST ... AS BINARY): variables and parameters take the
--   database default collation, which may be case-insensitive (COMPATIBILITY, character set row).
-- Parameters:
--   p_supervisor_key VARCHAR(191)  'global' or 'artifact:<family>'
--   p_holder_id      VARCHAR(128)  random id of the candidate process
--   p_ttl_ms         INT           lease time to live, 1000 .. 3600000 ms, from the database clock
-- Result: one row (supervisor_key, holder_id, supervisor_generation, expires_at, outcome, db_now)
--   outcome: 'acquired' (new term, generation incremented), 'renewed' (caller already held a live
--   term), 'standby' (another holder has a live term; holder_id/expires_at are that holder's).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument  missing key or holder, or ttl out of range.
CREATE PROCEDURE pc_aps_acquire_term(
  IN p_supervisor_key VARCHAR(191),
  IN p_holder_id      VARCHAR(128),
  IN p_ttl_ms         INT
)
BEGIN
  DECLARE v_found      INT DEFAULT 1;
  DECLARE v_now        DATETIME(3);
  DECLARE v_holder     VARCHAR(128) DEFAULT NULL;
  DECLARE v_generation BIGINT DEFAULT 0;
  DECLARE v_expires    DATETIME(3) DEFAULT NULL;
  DECLARE v_outcome    VARCHAR(16);
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_supervisor_key IS NULL OR p_supervisor_key = '' OR p_holder_id IS NULL OR p_holder_id = ''
     OR p_ttl_ms IS NULL OR p_ttl_ms < 1000 OR p_ttl_ms > 3600000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  -- Make sure the row exists, then lock it; the no-op update keeps an existing row unchanged.
  INSERT INTO pc_artifact_processing_leases (supervisor_key, supervisor_generation, updated_at)
  VALUES (p_supervisor_key, 0, UTC_TIMESTAMP(3))
  ON DUPLICATE KEY UPDATE supervisor_key = supervisor_key;

  SELECT holder_id, supervisor_generation, expires_at
    INTO v_holder, v_generation, v_expires
    FROM pc_artifact_processing_leases
   WHERE supervisor_key = p_supervisor_key
     FOR UPDATE;
  -- Read the clock only once the row lock is held: a takeover that waited for the lock judges
  -- expiry and computes the new expiry from the time it actually decides.
  SET v_now = UTC_TIMESTAMP(3);

  IF v_holder IS NOT NULL AND CAST(v_holder AS BINARY) = CAST(p_holder_id AS BINARY)
     AND (v_expires IS NULL OR v_expires > v_now) THEN
    SET v_expires = DATE_ADD(v_now, INTERVAL p_ttl_ms * 1000 MICROSECOND);
    UPDATE pc_artifact_processing_leases
       SET expires_at = v_expires, renewed_at = v_now, updated_at = v_now
     WHERE supervisor_key = p_supervisor_key;
    SET v_outcome = 'renewed';

  ELSEIF v_holder IS NULL OR (v_expires IS NOT NULL AND v_expires <= v_now) THEN
    SET v_generation = v_generation + 1;
    SET v_holder = p_holder_id;
    -- Fence rows first (all 32 slots, migration 0007; holder and generation only, 0015; one
    -- writer, 0021): this waits for every open fenced transaction of the old term, under the
    -- lease row lock.
    CALL pc_aps_write_fences(p_supervisor_key, v_holder, v_generation);
    -- The new term's expiry counts from after that wait.
    SET v_now = UTC_TIMESTAMP(3);
    SET v_expires = DATE_ADD(v_now, INTERVAL p_ttl_ms * 1000 MICROSECOND);
    UPDATE pc_artifact_processing_leases
       SET holder_id = v_holder, supervisor_generation = v_generation, expires_at = v_expires,
           acquired_at = v_now, renewed_at = v_now, updated_at = v_now
     WHERE supervisor_key = p_supervisor_key;
    SET v_outcome = 'acquired';

  ELSE
    SET v_outcome = 'standby';
  END IF;
  COMMIT;

  SELECT p_supervisor_key AS supervisor_key, v_holder AS holder_id, v_generation AS supervisor_generation,
         v_expires AS expires_at, v_outcome AS outcome, v_now AS db_now;
END
