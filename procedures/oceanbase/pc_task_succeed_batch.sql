-- Operation: pc_task_succeed_batch   (SQLite twin: sql/sqlite/pc_task_succeed_batch.sql; TypeScript: TaskStore.succeedBatch)
-- Purpose: the task runner commits the successes its worker processes reported (attempts
--   without ctx.onComplete writes) as ONE transaction and ONE call (group commit), and claims
--   the tasks that take their places in the same transaction. Each item is exactly a
--   pc_task_complete of its own attempt (internal/pc_aps_task_complete_attempt.sql: fenced by
--   token and an unexpired lease by the database clock; a recorded cancel or the runner's
--   'timeout' verdict refuses it). A refused item writes nothing and does not stop the others:
--   its outcome says why. Then up to p_max_count tasks, and at most one per success written, are
--   claimed as pc_task_claim_batch claims them (pc_aps_task_claim_rows, after the successes: the
--   slots they freed count; a refused item's attempt still holds its slot).
-- Transaction: owns its transaction. Do not call inside an open transaction.
-- Locks: the rows of the items, in list order (the runner sends them by ascending task id), then
--   (p_max_count > 0) the 'claims' row of pc_durable_task_control and the claimed rows.
-- Parameters (one item per attempt, the same count in every list; COMPATIBILITY rows 111, 118):
--   p_task_ids            MEDIUMTEXT  18 digits per item, 1..100 items, no id twice
--   p_attempt_tokens      MEDIUMTEXT  the attempt tokens concatenated
--   p_attempt_token_ends  MEDIUMTEXT  each token's end offset into p_attempt_tokens, 8 digits per item
--   p_results             LONGTEXT    the JSON results concatenated
--   p_result_ends         MEDIUMTEXT  each result's end offset in UTF-8 bytes, 8 digits per item;
--                                     an empty item stores NULL
--   p_worker_id           VARCHAR(128) the claiming worker (attempt owner of the claims)
--   p_lease_ms            INT          lease of the claims, 1000 .. 3600000
--   p_task_types          MEDIUMTEXT   comma-separated task types the worker's registry knows (non-empty)
--   p_max_count           INT          the most tasks to claim, 0 .. 100 (0 claims none; never more
--                                      than the successes written)
-- Result: (p_max_count > 0) the claimed tasks as pc_task_claim_batch returns them, sent before the
--   COMMIT; then one row (outcomes): a comma-separated list in list order, per item 'succeeded' or
--   the error pc_task_complete raises for it: 'task_not_found', 'attempt_lost', 'cancel_requested'.
-- Errors (SQLSTATE '45000', MESSAGE_TEXT): invalid_argument (no items or more than 100, lists of
--   different lengths, a malformed list or index, a token not 1..36 characters, an id twice, a
--   result that is not UTF-8; an empty worker or type list, lease or count out of range);
--   capacity_not_set (the 'claims' row has no capacity, p_max_count > 0); any other error (a deadlock, a lost connection) rolls the whole
--   batch back: then nothing was written.
CREATE PROCEDURE pc_task_succeed_batch(
  IN p_task_ids           MEDIUMTEXT,
  IN p_attempt_tokens     MEDIUMTEXT,
  IN p_attempt_token_ends MEDIUMTEXT,
  IN p_results            LONGTEXT,
  IN p_result_ends        MEDIUMTEXT,
  IN p_worker_id          VARCHAR(128),
  IN p_lease_ms           INT,
  IN p_task_types         MEDIUMTEXT,
  IN p_max_count          INT
)
BEGIN
  DECLARE v_n          INT;
  DECLARE v_i          INT DEFAULT 0;
  DECLARE v_ids        MEDIUMBLOB;
  DECLARE v_tokens     MEDIUMBLOB;
  DECLARE v_token_ends MEDIUMBLOB;
  DECLARE v_results    LONGBLOB;
  DECLARE v_result_ends MEDIUMBLOB;
  DECLARE v_ts         BIGINT;
  DECLARE v_te         BIGINT;
  DECLARE v_rs         BIGINT;
  DECLARE v_re         BIGINT;
  DECLARE v_task_id    BIGINT;
  DECLARE v_token      VARCHAR(36);
  DECLARE v_result_b   LONGBLOB;
  DECLARE v_outcome    VARCHAR(128);
  DECLARE v_seen       MEDIUMTEXT DEFAULT '';
  DECLARE v_outcomes   MEDIUMTEXT DEFAULT '';
  DECLARE v_sep        VARCHAR(1) DEFAULT '';
  DECLARE v_written    INT DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_task_ids IS NULL OR p_attempt_tokens IS NULL OR p_attempt_token_ends IS NULL OR p_results IS NULL
     OR p_result_ends IS NULL OR LENGTH(p_task_ids) NOT BETWEEN 18 AND 1800 OR LENGTH(p_task_ids) MOD 18 <> 0
     OR p_worker_id IS NULL OR p_worker_id = '' OR p_lease_ms IS NULL OR p_lease_ms < 1000 OR p_lease_ms > 3600000
     OR p_task_types IS NULL OR p_task_types = '' OR p_max_count IS NULL OR p_max_count < 0 OR p_max_count > 100 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  SET v_n = LENGTH(p_task_ids) DIV 18;
  -- Digits only before any CAST (row 36).
  IF LENGTH(p_attempt_token_ends) <> v_n * 8 OR LENGTH(p_result_ends) <> v_n * 8
     OR NOT (CONCAT(p_task_ids, p_attempt_token_ends, p_result_ends) REGEXP '^[0-9]+$') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;
  -- Byte strings: a cut at an offset is constant time (row 111).
  SET v_ids = CAST(p_task_ids AS BINARY);
  SET v_tokens = CAST(p_attempt_tokens AS BINARY);
  SET v_token_ends = CAST(CONCAT('00000000', p_attempt_token_ends) AS BINARY);
  SET v_results = CAST(p_results AS BINARY);
  SET v_result_ends = CAST(CONCAT('00000000', p_result_ends) AS BINARY);
  IF CAST(SUBSTRING(v_token_ends, v_n * 8 + 1, 8) AS SIGNED) <> LENGTH(v_tokens)
     OR CAST(SUBSTRING(v_result_ends, v_n * 8 + 1, 8) AS SIGNED) <> LENGTH(v_results) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  WHILE v_i < v_n DO
    SET v_i = v_i + 1;
    SET v_task_id = CAST(SUBSTRING(v_ids, v_i * 18 - 17, 18) AS SIGNED);
    SET v_ts = CAST(SUBSTRING(v_token_ends, v_i * 8 - 7, 8) AS SIGNED);
    SET v_te = CAST(SUBSTRING(v_token_ends, v_i * 8 + 1, 8) AS SIGNED);
    SET v_rs = CAST(SUBSTRING(v_result_ends, v_i * 8 - 7, 8) AS SIGNED);
    SET v_re = CAST(SUBSTRING(v_result_ends, v_i * 8 + 1, 8) AS SIGNED);
    IF v_te - v_ts NOT BETWEEN 1 AND 36 OR v_re < v_rs OR FIND_IN_SET(v_task_id, v_seen) > 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
    END IF;
    SET v_result_b = SUBSTRING(v_results, v_rs + 1, v_re - v_rs);
    -- <=>: a server that turns invalid UTF-8 into NULL must not let the item through.
    IF NOT (CONVERT(CONVERT(v_result_b USING utf8mb4) USING binary) <=> v_result_b) THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
    END IF;
    SET v_token = CONVERT(SUBSTRING(v_tokens, v_ts + 1, v_te - v_ts) USING utf8mb4);
    SET v_seen = CONCAT(v_seen, ',', v_task_id);
    SET v_outcome = 'succeeded';
    -- The item's refusal (SQLSTATE '45000' of the success rules, raised before their one write)
    -- becomes its outcome; any other error reaches the exit handler above.
    BEGIN
      DECLARE EXIT HANDLER FOR SQLSTATE '45000'
      BEGIN
        GET DIAGNOSTICS CONDITION 1 v_outcome = MESSAGE_TEXT;
      END;
      CALL pc_aps_task_complete_attempt(v_task_id, v_token,
                                        IF(v_re > v_rs, CONVERT(v_result_b USING utf8mb4), NULL));
    END;
    SET v_outcomes = CONCAT(v_outcomes, v_sep, v_outcome);
    SET v_written = v_written + (v_outcome = 'succeeded');
    SET v_sep = ',';
  END WHILE;
  -- At most one claim per success written: a refused item's attempt still holds its slot.
  IF LEAST(p_max_count, v_written) > 0 THEN
    CALL pc_aps_task_claim_rows(p_worker_id, p_lease_ms, p_task_types, LEAST(p_max_count, v_written));
  END IF;
  COMMIT;

  SELECT v_outcomes AS outcomes;
END
