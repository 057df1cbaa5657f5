-- Operation: pc_aps_invalidate_term   (SQLite twin: sql/sqlite/pc_aps_invalidate_term.sql; TypeScript: Store.invalidateTerm)
-- Purpose: end a term for shutdown or mode switch (lease row and its fence rows). Increments supervisor_generation and clears
--   holder_id and expires_at, so every worker of the old term is fenced out at its next write.
--   With an expected holder and generation (shutdown), only that term is invalidated. With both
--   NULL (administrative mode switch), the current term is invalidated whoever holds it; a key
--   that has no row yet gets one at generation 1, so the key exists with an advanced generation.
-- Fencing: the fence rows (holder and generation only since migration 0015; pc_aps_write_fences
--   since 0021, which also creates missing ones) are written with the lease row in this transaction, so it waits for every open fenced transaction of the key
--   (pc_aps_assert_term locks its fence row until commit) and none of the old term commits after it.
-- Transaction: owns its transaction. Do not call inside an open transaction.
-- Holder ids are compared as bytes (CAST ... AS BINARY): variables and parameters take the
--   database default collation, which may be case-insensitive (COMPATIBILITY, character set row).
-- Parameters:
--   p_supervisor_key          VARCHAR(191)
--   p_expected_holder_id      VARCHAR(128)  NULL for an unconditional invalidation
--   p_expected_generation     BIGINT        NULL for an unconditional invalidation
-- Result: one row (supervisor_key, holder_id=NULL, supervisor_generation (the new one),
--   expires_at=NULL, outcome='invalidated', db_now)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   term_lost         an expected holder/generation was given and is not the current one.
--   invalid_argument  only one of holder and generation was given, or the key is empty.
CREATE PROCEDURE pc_aps_invalidate_term(
  IN p_supervisor_key      VARCHAR(191),
  IN p_expected_holder_id  VARCHAR(128),
  IN p_expected_generation BIGINT
)
BEGIN
  DECLARE v_found      INT DEFAULT 1;
  DECLARE v_now        DATETIME(3);
  DECLARE v_holder     VARCHAR(128) DEFAULT NULL;
  DECLARE v_generation BIGINT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_supervisor_key IS NULL OR p_supervisor_key = ''
     OR (p_expected_holder_id IS NULL) <> (p_expected_generation IS NULL) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  SET v_now = UTC_TIMESTAMP(3);
  INSERT INTO pc_artifact_processing_leases (supervisor_key, supervisor_generation, updated_at)
  VALUES (p_supervisor_key, 0, v_now)
  ON DUPLICATE KEY UPDATE supervisor_key = supervisor_key;

  SELECT holder_id, supervisor_generation
    INTO v_holder, v_generation
    FROM pc_artifact_processing_leases
   WHERE supervisor_key = p_supervisor_key
     FOR UPDATE;

  IF p_expected_holder_id IS NOT NULL
     AND (v_holder IS NULL OR CAST(v_holder AS BINARY) <> CAST(p_expected_holder_id AS BINARY) OR v_generation <> p_expected_generation) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'term_lost';
  END IF;

  SET v_generation = v_generation + 1;
  UPDATE pc_artifact_processing_leases
     SET holder_id = NULL, supervisor_generation = v_generation, expires_at = NULL, updated_at = v_now
   WHERE supervisor_key = p_supervisor_key;
  CALL pc_aps_write_fences(p_supervisor_key, NULL, v_generation);
  COMMIT;

  SELECT p_supervisor_key AS supervisor_key, CAST(NULL AS CHAR) AS holder_id,
         v_generation AS supervisor_generation, CAST(NULL AS DATETIME(3)) AS expires_at,
         'invalidated' AS outcome, v_now AS db_now;
END
