-- Operation: pc_aps_acknowledge_batch   (SQLite twin: sql/sqlite/pc_aps_acknowledge_batch.sql; TypeScript: Store.acknowledgeBatch)
-- Purpose: the supervisor commits the acknowledgements its workers asked for without business
--   writes (ctx.acknowledge(): NOOP, or a candidate already committed) as ONE transaction and
--   ONE call (group commit): for every key, exactly the semantics of pc_aps_ack_invocation
--   (handled_generation := max(handled, claimed generation read at start), never a newer request;
--   optionally clean_generation := max(clean, the start snapshot's dirty generation), never
--   beyond dirty_generation), all fenced by one term assertion.
-- Transaction: owns its transaction. Do not call inside an open transaction.
-- Parameters:
--   p_supervisor_key, p_holder_id, p_supervisor_generation   the term the invocations ran under
--   p_binding_name          VARCHAR(128)   every key of the batch belongs to this binding
--   p_scope_ids             MEDIUMTEXT     comma-separated scope ids (scope ids never contain commas), 1..1000 items
--   p_claimed_generations   MEDIUMTEXT     comma-separated requested generations read at start (>= 1), one per scope id
--   p_clean_throughs        MEDIUMTEXT     comma-separated dirty generations of the start snapshots to confirm
--                                          as clean, one per scope id; an empty item leaves clean alone
-- Result: one row of comma-separated lists in the order of p_scope_ids:
--   (outcomes: 'acknowledged' | 'already_handled' per key, requested_generations,
--    handled_generations, dirty_generations, clean_generations)
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): those of pc_aps_ack_invocation (term_lost,
--   intent_not_found, ack_beyond_request, clean_beyond_dirty, invalid_argument; also
--   invalid_argument when the three lists differ in length, are empty, hold more than 1000 items,
--   hold an item that is not a number, or name a scope id twice); the whole batch is
--   rolled back when one is raised (the caller then acknowledges the keys one by one).
CREATE PROCEDURE pc_aps_acknowledge_batch(
  IN p_supervisor_key        VARCHAR(191),
  IN p_holder_id             VARCHAR(128),
  IN p_supervisor_generation BIGINT,
  IN p_binding_name          VARCHAR(128),
  IN p_scope_ids             MEDIUMTEXT,
  IN p_claimed_generations   MEDIUMTEXT,
  IN p_clean_throughs        MEDIUMTEXT
)
BEGIN
  DECLARE v_count      INT;
  DECLARE v_i          INT DEFAULT 0;
  DECLARE v_scope      VARCHAR(191);
  DECLARE v_claimed_s  VARCHAR(32);
  DECLARE v_clean_s    VARCHAR(32);
  DECLARE v_claimed    BIGINT;
  DECLARE v_clean_to   BIGINT;
  DECLARE v_seen       MEDIUMTEXT DEFAULT '';
  DECLARE v_found      INT;
  DECLARE v_requested  BIGINT;
  DECLARE v_handled    BIGINT;
  DECLARE v_dirty      BIGINT;
  DECLARE v_clean      BIGINT;
  DECLARE v_outcomes   MEDIUMTEXT DEFAULT '';
  DECLARE v_requesteds MEDIUMTEXT DEFAULT '';
  DECLARE v_handleds   MEDIUMTEXT DEFAULT '';
  DECLARE v_dirties    MEDIUMTEXT DEFAULT '';
  DECLARE v_cleans     MEDIUMTEXT DEFAULT '';
  DECLARE v_sep        VARCHAR(1) DEFAULT '';
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_scope_ids IS NULL OR p_scope_ids = '' OR p_claimed_generations IS NULL OR p_clean_throughs IS NULL THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SET v_count = CHAR_LENGTH(p_scope_ids) - CHAR_LENGTH(REPLACE(p_scope_ids, ',', '')) + 1;
  IF v_count > 1000
     OR CHAR_LENGTH(p_claimed_generations) - CHAR_LENGTH(REPLACE(p_claimed_generations, ',', '')) + 1 <> v_count
     OR CHAR_LENGTH(p_clean_throughs) - CHAR_LENGTH(REPLACE(p_clean_throughs, ',', '')) + 1 <> v_count THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  CALL pc_aps_assert_term(p_supervisor_key, p_holder_id, p_supervisor_generation);

  WHILE v_i < v_count DO
    SET v_i = v_i + 1;
    SET v_scope = SUBSTRING_INDEX(SUBSTRING_INDEX(p_scope_ids, ',', v_i), ',', -1);
    SET v_claimed_s = SUBSTRING_INDEX(SUBSTRING_INDEX(p_claimed_generations, ',', v_i), ',', -1);
    SET v_clean_s = SUBSTRING_INDEX(SUBSTRING_INDEX(p_clean_throughs, ',', v_i), ',', -1);
    -- Digits only before any CAST (a strict sql_mode turns a bad CAST into an error of its own).
    IF v_scope = '' OR NOT (v_claimed_s REGEXP '^[0-9]{1,18}$') OR NOT (v_clean_s = '' OR v_clean_s REGEXP '^[0-9]{1,18}$')
       OR FIND_IN_SET(v_scope COLLATE utf8mb4_bin, v_seen COLLATE utf8mb4_bin) > 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
    END IF;
    SET v_claimed = CAST(v_claimed_s AS SIGNED);
    SET v_clean_to = CASE WHEN v_clean_s = '' THEN NULL ELSE CAST(v_clean_s AS SIGNED) END;
    IF v_claimed < 1 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
    END IF;
    SET v_seen = CONCAT(v_seen, ',', v_scope);

    SET v_found = 1;
    SELECT requested_generation, handled_generation, dirty_generation, clean_generation
      INTO v_requested, v_handled, v_dirty, v_clean
      FROM pc_artifact_processing_intents
     WHERE binding_name = p_binding_name AND scope_id = v_scope
       FOR UPDATE;
    IF v_found = 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'intent_not_found';
    END IF;
    IF v_claimed > v_requested THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ack_beyond_request';
    END IF;
    IF v_clean_to IS NOT NULL AND v_clean_to > v_dirty THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'clean_beyond_dirty';
    END IF;

    IF v_handled >= v_claimed THEN
      SET v_outcomes = CONCAT(v_outcomes, v_sep, 'already_handled');
    ELSE
      SET v_outcomes = CONCAT(v_outcomes, v_sep, 'acknowledged');
      SET v_handled = v_claimed;
    END IF;
    IF v_clean_to IS NOT NULL AND v_clean_to > v_clean THEN
      SET v_clean = v_clean_to;
    END IF;

    UPDATE pc_artifact_processing_intents
       SET handled_generation = v_handled, clean_generation = v_clean, updated_at = UTC_TIMESTAMP(3)
     WHERE binding_name = p_binding_name AND scope_id = v_scope;

    SET v_requesteds = CONCAT(v_requesteds, v_sep, v_requested);
    SET v_handleds = CONCAT(v_handleds, v_sep, v_handled);
    SET v_dirties = CONCAT(v_dirties, v_sep, v_dirty);
    SET v_cleans = CONCAT(v_cleans, v_sep, v_clean);
    SET v_sep = ',';
  END WHILE;
  COMMIT;

  SELECT v_outcomes AS outcomes, v_requesteds AS requested_generations, v_handleds AS handled_generations,
         v_dirties AS dirty_generations, v_cleans AS clean_generations;
END
