-- Operation: pc_aps_adopt_topic_memory_pr1490   (SQLite twin: sql/sqlite/pc_aps_adopt_topic_memory_pr1490.sql; TypeScript: adoptTopicMemoryPr1490 in src/migrations/adoption.ts)
-- Purpose: step 3 of `apsup migrate adopt topic-memory-pr1490` (RFC 11, A12), in one
--   transaction, after the preflight passed, the PR #1490 binding states and lease were set aside
--   (pc_aps_pr1490_*) and the current schema was migrated:
--   * every legacy pending scope whose source is not covered by its cursor
--     (source_through > source_cursor) gets an intent with ordinary work (dirty 1, clean 0);
--   * an unconfirmed flush (flush_generation > flushed_generation) also becomes an accepted
--     request (requested 1, handled 0): it never turns into work that only waits for a check;
--   * every unfinished auto-wave target becomes an accepted request (the recovery duty stays;
--     the processor's own progress deduplicates), with ordinary work when its frozen source is
--     uncovered;
--   * pending_sequence follows the legacy pending order (created_at, then scope_id), so scans
--     keep visiting older scopes first;
--   * last_auto_wave_completed_at becomes the check checkpoint (the remaining wait is kept) only
--     when the binding has no automatic work in progress (no wave started, no unfinished
--     target); otherwise the checkpoint stays NULL and the first check runs as soon as there is
--     work;
--   * the lease keys continue with generation + 1 and no holder (every PR #1490 term is fenced
--     out); the recorded mode becomes 'global' if none is recorded (PR #1490 ran one global
--     supervisor);
--   * Topic pending, source cursors and the legacy rows are not changed.
--   It then checks the result against the legacy rows (every uncovered pending has dirty > clean,
--   every unconfirmed flush and unfinished target has requested > handled, no checkpoint where
--   automatic work was in progress) and records the adoption; any failed check aborts and rolls
--   back everything.
-- Transaction: owns its transaction (do not call inside an open one). The set-aside PR #1490
--   lease rows are locked FOR UPDATE first, so a stray old candidate cannot renew meanwhile.
--   Installed by the adoption plan right before it runs (it reads tables that exist only in a
--   database being adopted) and dropped by the retire step.
-- Parameters:
--   p_binding_name  VARCHAR(191)  the Topic Memory binding (the PR #1490 binding name, kept)
-- Result: one row (binding_name, intent_keys, dirty_keys, requested_keys,
--   last_schedule_checkpoint_at, lease_keys, summary, db_now).
-- Errors (SQLSTATE '45000', MESSAGE_TEXT):
--   invalid_argument       empty binding name.
--   adoption_done          this adoption is already recorded in pc_aps_adoptions.
--   adoption_conflict      the binding already has intents or a binding state, or a lease row
--                          exists: the current runtime already ran on this database.
--   live_candidate         a set-aside PR #1490 lease is still held and unexpired.
--   adoption_inconsistent  legacy rows of another binding, a flush confirmed beyond its request,
--                          a cursor beyond its announced source, or the result check failed.
CREATE PROCEDURE pc_aps_adopt_topic_memory_pr1490(
  IN p_binding_name VARCHAR(191)
)
BEGIN
  DECLARE v_now   DATETIME(3);
  DECLARE v_count BIGINT DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    ROLLBACK;
    RESIGNAL;
  END;

  IF p_binding_name IS NULL OR p_binding_name = '' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'invalid_argument';
  END IF;

  START TRANSACTION;
  -- Serialize with a stray PR #1490 candidate: lock its lease rows before judging them.
  SELECT COUNT(*) INTO v_count FROM pc_aps_pr1490_leases FOR UPDATE;
  SET v_now = UTC_TIMESTAMP(3);

  IF EXISTS (SELECT 1 FROM pc_aps_adoptions WHERE adoption = 'topic_memory_pr1490') THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'adoption_done';
  END IF;
  IF EXISTS (SELECT 1 FROM pc_artifact_processing_intents WHERE binding_name = p_binding_name)
     OR EXISTS (SELECT 1 FROM pc_artifact_processing_binding_states WHERE binding_name = p_binding_name)
     OR EXISTS (SELECT 1 FROM pc_artifact_processing_leases) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'adoption_conflict';
  END IF;
  IF EXISTS (SELECT 1 FROM pc_aps_pr1490_leases
              WHERE holder_id IS NOT NULL AND expires_at IS NOT NULL AND expires_at > v_now) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'live_candidate';
  END IF;
  -- The preflight's data checks again, inside the transaction.
  IF EXISTS (SELECT 1 FROM pc_artifact_processing_pending WHERE binding_name <> p_binding_name)
     OR EXISTS (SELECT 1 FROM pc_artifact_processing_auto_wave_targets WHERE binding_name <> p_binding_name)
     OR EXISTS (SELECT 1 FROM pc_aps_pr1490_binding_states WHERE binding_name <> p_binding_name)
     OR EXISTS (SELECT 1 FROM pc_artifact_processing_pending
                 WHERE flushed_generation > flush_generation OR flushed_generation < 0 OR source_through < 0)
     OR EXISTS (SELECT 1 FROM pc_artifact_processing_pending p
                  JOIN pc_artifact_processing_source_cursors c
                    ON c.binding_name = p.binding_name AND c.scope_id = p.scope_id
                 WHERE c.source_cursor > p.source_through) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'adoption_inconsistent';
  END IF;

  -- Intents, in legacy pending order (INSERT ... SELECT ... ORDER BY assigns AUTO_INCREMENT
  -- values in that order: COMPATIBILITY.md).
  INSERT INTO pc_artifact_processing_intents (binding_name, scope_id, dirty_generation, requested_generation, created_at, updated_at)
  SELECT p_binding_name, k.scope_id, MAX(k.uncovered), MAX(k.owed), v_now, v_now
    FROM (SELECT p.scope_id, p.created_at AS since,
                 CASE WHEN p.source_through > COALESCE(c.source_cursor, 0) THEN 1 ELSE 0 END AS uncovered,
                 CASE WHEN p.flush_generation > p.flushed_generation THEN 1 ELSE 0 END AS owed
            FROM pc_artifact_processing_pending p
            LEFT JOIN pc_artifact_processing_source_cursors c
              ON c.binding_name = p.binding_name AND c.scope_id = p.scope_id
           WHERE p.binding_name = p_binding_name
          UNION ALL
          SELECT t.scope_id, COALESCE(t.started_at, b.auto_wave_started_at) AS since,
                 CASE WHEN t.source_through > COALESCE(c.source_cursor, 0) THEN 1 ELSE 0 END AS uncovered,
                 1 AS owed
            FROM pc_artifact_processing_auto_wave_targets t
            LEFT JOIN pc_aps_pr1490_binding_states b ON b.binding_name = t.binding_name
            LEFT JOIN pc_artifact_processing_source_cursors c
              ON c.binding_name = t.binding_name AND c.scope_id = t.scope_id
           WHERE t.binding_name = p_binding_name AND t.completed_at IS NULL) k
   GROUP BY k.scope_id
  HAVING MAX(k.uncovered) = 1 OR MAX(k.owed) = 1
   ORDER BY MIN(COALESCE(k.since, '9999-12-31 23:59:59.999')), k.scope_id;

  -- The check checkpoint: the last wave's completion only where no automatic work is in progress.
  INSERT INTO pc_artifact_processing_binding_states (binding_name, last_schedule_checkpoint_at, updated_at)
  SELECT b.binding_name,
         CASE WHEN b.auto_wave_started_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM pc_artifact_processing_auto_wave_targets t
                                WHERE t.binding_name = b.binding_name AND t.completed_at IS NULL)
              THEN b.last_auto_wave_completed_at ELSE NULL END,
         v_now
    FROM pc_aps_pr1490_binding_states b
   WHERE b.binding_name = p_binding_name;

  -- Every PR #1490 term is fenced out: same keys, generation + 1, no holder (and fence rows).
  INSERT INTO pc_artifact_processing_leases (supervisor_key, holder_id, supervisor_generation, expires_at, updated_at)
  SELECT supervisor_key, NULL, supervisor_generation + 1, NULL, v_now FROM pc_aps_pr1490_leases;
  -- Its own fence-row INSERT, not pc_aps_write_fences: the conversion runs at a fixed point of the
  -- chain (CONVERSION_AFTER in src/migrations/adoption.ts), before migration 0021 installs it.
  INSERT INTO pc_artifact_processing_lease_fences (supervisor_key, fence_slot, holder_id, supervisor_generation, expires_at)
  SELECT l.supervisor_key, s.fence_slot, NULL, l.supervisor_generation, NULL
    FROM pc_artifact_processing_leases l CROSS JOIN pc_artifact_processing_fence_slots s;
  INSERT INTO pc_artifact_processing_runtime (runtime_id, mode, maintenance, updated_at)
  VALUES (1, NULL, 0, v_now)
  ON DUPLICATE KEY UPDATE runtime_id = runtime_id;
  UPDATE pc_artifact_processing_runtime SET mode = 'global', updated_at = v_now
   WHERE runtime_id = 1 AND mode IS NULL;

  -- Consistency check of the result against the legacy rows.
  IF EXISTS (SELECT 1 FROM pc_artifact_processing_pending p
               LEFT JOIN pc_artifact_processing_source_cursors c
                 ON c.binding_name = p.binding_name AND c.scope_id = p.scope_id
               LEFT JOIN pc_artifact_processing_intents i
                 ON i.binding_name = p.binding_name AND i.scope_id = p.scope_id
              WHERE p.binding_name = p_binding_name
                AND p.source_through > COALESCE(c.source_cursor, 0)
                AND (i.scope_id IS NULL OR i.dirty_generation <= i.clean_generation))
     OR EXISTS (SELECT 1 FROM pc_artifact_processing_pending p
                  LEFT JOIN pc_artifact_processing_intents i
                    ON i.binding_name = p.binding_name AND i.scope_id = p.scope_id
                 WHERE p.binding_name = p_binding_name
                   AND p.flush_generation > p.flushed_generation
                   AND (i.scope_id IS NULL OR i.requested_generation <= i.handled_generation))
     OR EXISTS (SELECT 1 FROM pc_artifact_processing_auto_wave_targets t
                  LEFT JOIN pc_artifact_processing_intents i
                    ON i.binding_name = t.binding_name AND i.scope_id = t.scope_id
                 WHERE t.binding_name = p_binding_name AND t.completed_at IS NULL
                   AND (i.scope_id IS NULL OR i.requested_generation <= i.handled_generation))
     OR EXISTS (SELECT 1 FROM pc_artifact_processing_binding_states s
                  JOIN pc_aps_pr1490_binding_states b ON b.binding_name = s.binding_name
                 WHERE s.last_schedule_checkpoint_at IS NOT NULL
                   AND (b.auto_wave_started_at IS NOT NULL
                        OR EXISTS (SELECT 1 FROM pc_artifact_processing_auto_wave_targets t
                                    WHERE t.binding_name = b.binding_name AND t.completed_at IS NULL)))
     OR (SELECT COUNT(*) FROM pc_artifact_processing_leases l
           JOIN pc_aps_pr1490_leases o ON o.supervisor_key = l.supervisor_key
          WHERE l.supervisor_generation > o.supervisor_generation AND l.holder_id IS NULL)
        <> (SELECT COUNT(*) FROM pc_aps_pr1490_leases) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'adoption_inconsistent';
  END IF;

  INSERT INTO pc_aps_adoptions (adoption, state, summary, converted_at)
  SELECT 'topic_memory_pr1490', 'converted',
         CONCAT('binding ', p_binding_name, ': ',
                (SELECT COUNT(*) FROM pc_artifact_processing_intents WHERE binding_name = p_binding_name), ' keys, ',
                (SELECT COUNT(*) FROM pc_artifact_processing_intents
                  WHERE binding_name = p_binding_name AND dirty_generation > clean_generation), ' with ordinary work, ',
                (SELECT COUNT(*) FROM pc_artifact_processing_intents
                  WHERE binding_name = p_binding_name AND requested_generation > handled_generation), ' accepted requests; checkpoint ',
                COALESCE(CAST((SELECT last_schedule_checkpoint_at FROM pc_artifact_processing_binding_states
                                 WHERE binding_name = p_binding_name) AS CHAR), 'none'),
                '; ', (SELECT COUNT(*) FROM pc_artifact_processing_leases), ' lease key(s) fenced'),
         v_now;
  COMMIT;

  SELECT p_binding_name AS binding_name,
         (SELECT COUNT(*) FROM pc_artifact_processing_intents WHERE binding_name = p_binding_name) AS intent_keys,
         (SELECT COUNT(*) FROM pc_artifact_processing_intents
           WHERE binding_name = p_binding_name AND dirty_generation > clean_generation) AS dirty_keys,
         (SELECT COUNT(*) FROM pc_artifact_processing_intents
           WHERE binding_name = p_binding_name AND requested_generation > handled_generation) AS requested_keys,
         (SELECT last_schedule_checkpoint_at FROM pc_artifact_processing_binding_states
           WHERE binding_name = p_binding_name) AS last_schedule_checkpoint_at,
         (SELECT COUNT(*) FROM pc_artifact_processing_leases) AS lease_keys,
         (SELECT summary FROM pc_aps_adoptions WHERE adoption = 'topic_memory_pr1490') AS summary,
         v_now AS db_now;
END
