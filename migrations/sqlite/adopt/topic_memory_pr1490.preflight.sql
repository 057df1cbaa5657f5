-- Preflight of `apsup migrate adopt topic-memory-pr1490` (SQLite): read-only checks of a Topic
-- Memory PR #1490 database before anything is changed. Every statement returns the problems it
-- finds as rows (problem, binding_name, scope_id, detail); no rows means the check passed. The
-- first statement checks the baseline shape; when it reports anything, the others are not run.
-- Any problem stops the adoption with a report and the database is left exactly as it was.
-- Parameter: :binding_name, the Topic Memory binding of the registered families (the PR #1490
--   binding name is kept; every legacy row must belong to it).

-- baseline_shape: a table or column the conversion reads is missing.
SELECT 'baseline_shape' AS problem, r.t AS binding_name, r.c AS scope_id,
       'missing ' || r.t || '.' || r.c AS detail
  FROM (SELECT 'pc_artifact_processing_leases' AS t, 'supervisor_key' AS c
        UNION ALL SELECT 'pc_artifact_processing_leases', 'holder_id'
        UNION ALL SELECT 'pc_artifact_processing_leases', 'supervisor_generation'
        UNION ALL SELECT 'pc_artifact_processing_leases', 'expires_at'
        UNION ALL SELECT 'pc_artifact_processing_binding_states', 'binding_name'
        UNION ALL SELECT 'pc_artifact_processing_binding_states', 'last_auto_wave_completed_at'
        UNION ALL SELECT 'pc_artifact_processing_binding_states', 'auto_wave_generation'
        UNION ALL SELECT 'pc_artifact_processing_binding_states', 'auto_wave_started_at'
        UNION ALL SELECT 'pc_artifact_processing_pending', 'binding_name'
        UNION ALL SELECT 'pc_artifact_processing_pending', 'scope_id'
        UNION ALL SELECT 'pc_artifact_processing_pending', 'source_through'
        UNION ALL SELECT 'pc_artifact_processing_pending', 'flush_generation'
        UNION ALL SELECT 'pc_artifact_processing_pending', 'flushed_generation'
        UNION ALL SELECT 'pc_artifact_processing_pending', 'created_at'
        UNION ALL SELECT 'pc_artifact_processing_source_cursors', 'binding_name'
        UNION ALL SELECT 'pc_artifact_processing_source_cursors', 'scope_id'
        UNION ALL SELECT 'pc_artifact_processing_source_cursors', 'source_cursor'
        UNION ALL SELECT 'pc_artifact_processing_auto_wave_targets', 'binding_name'
        UNION ALL SELECT 'pc_artifact_processing_auto_wave_targets', 'auto_wave_generation'
        UNION ALL SELECT 'pc_artifact_processing_auto_wave_targets', 'scope_id'
        UNION ALL SELECT 'pc_artifact_processing_auto_wave_targets', 'source_through'
        UNION ALL SELECT 'pc_artifact_processing_auto_wave_targets', 'started_at'
        UNION ALL SELECT 'pc_artifact_processing_auto_wave_targets', 'completed_at') r
 WHERE NOT EXISTS (SELECT 1 FROM pragma_table_info(r.t) p WHERE p.name = r.c)
 ORDER BY r.t, r.c;

-- legacy_supervisor_live: a PR #1490 supervisor still holds an unexpired lease (stop every old
-- candidate and its workers first; a permanent SQLite term, expires_at NULL, is the operator's
-- to stop: the old host process must not run during the adoption).
SELECT 'legacy_supervisor_live' AS problem, supervisor_key AS binding_name, holder_id AS scope_id,
       'lease held until ' || expires_at AS detail
  FROM pc_artifact_processing_leases
 WHERE holder_id IS NOT NULL AND expires_at IS NOT NULL
   AND expires_at > strftime('%Y-%m-%d %H:%M:%f', 'now');

-- unmapped_binding: legacy rows of a binding that no registered family maps to.
SELECT 'unmapped_binding' AS problem, binding_name, MIN(scope_id) AS scope_id,
       COUNT(*) || ' row(s) in ' || t AS detail
  FROM (SELECT binding_name, scope_id, 'pc_artifact_processing_pending' AS t FROM pc_artifact_processing_pending
        UNION ALL SELECT binding_name, scope_id, 'pc_artifact_processing_source_cursors' FROM pc_artifact_processing_source_cursors
        UNION ALL SELECT binding_name, scope_id, 'pc_artifact_processing_auto_wave_targets' FROM pc_artifact_processing_auto_wave_targets
        UNION ALL SELECT binding_name, NULL, 'pc_artifact_processing_binding_states' FROM pc_artifact_processing_binding_states) x
 WHERE binding_name <> :binding_name
 GROUP BY binding_name, t
 ORDER BY binding_name, t;

-- flush_confirmed_beyond_request: a confirmed flush generation above the accepted one.
SELECT 'flush_confirmed_beyond_request' AS problem, binding_name, scope_id,
       'flushed_generation ' || flushed_generation || ' > flush_generation ' || flush_generation AS detail
  FROM pc_artifact_processing_pending
 WHERE flushed_generation > flush_generation OR flushed_generation < 0 OR source_through < 0
 ORDER BY binding_name, scope_id;

-- cursor_beyond_source: the cursor claims source that was never announced.
SELECT 'cursor_beyond_source' AS problem, p.binding_name, p.scope_id,
       'source_cursor ' || c.source_cursor || ' > source_through ' || p.source_through AS detail
  FROM pc_artifact_processing_pending p
  JOIN pc_artifact_processing_source_cursors c ON c.binding_name = p.binding_name AND c.scope_id = p.scope_id
 WHERE c.source_cursor > p.source_through
 ORDER BY p.binding_name, p.scope_id;

-- target_beyond_source: an unfinished target froze a source position that was never announced.
SELECT 'target_beyond_source' AS problem, t.binding_name, t.scope_id,
       'wave ' || t.auto_wave_generation || ' froze ' || t.source_through || ' > source_through ' || p.source_through AS detail
  FROM pc_artifact_processing_auto_wave_targets t
  JOIN pc_artifact_processing_pending p ON p.binding_name = t.binding_name AND p.scope_id = t.scope_id
 WHERE t.completed_at IS NULL AND t.source_through > p.source_through
 ORDER BY t.binding_name, t.scope_id;

-- target_times: a target completed without having started, or before it started.
SELECT 'target_times' AS problem, binding_name, scope_id,
       'wave ' || auto_wave_generation || ' started_at ' || COALESCE(started_at, 'NULL') || ', completed_at ' || completed_at AS detail
  FROM pc_artifact_processing_auto_wave_targets
 WHERE completed_at IS NOT NULL AND (started_at IS NULL OR completed_at < started_at)
 ORDER BY binding_name, scope_id;

-- target_of_unknown_wave: a target of a wave its binding never started.
SELECT 'target_of_unknown_wave' AS problem, t.binding_name, t.scope_id,
       'wave ' || t.auto_wave_generation || ', binding wave ' || COALESCE(CAST(b.auto_wave_generation AS TEXT), 'none') AS detail
  FROM pc_artifact_processing_auto_wave_targets t
  LEFT JOIN pc_artifact_processing_binding_states b ON b.binding_name = t.binding_name
 WHERE b.binding_name IS NULL OR t.auto_wave_generation > b.auto_wave_generation
 ORDER BY t.binding_name, t.scope_id;

-- wave_completed_with_unfinished_target: the binding records no wave in progress, yet a target
-- of its current wave never finished (PR #1490 completes a wave only when every target did).
SELECT 'wave_completed_with_unfinished_target' AS problem, t.binding_name, t.scope_id,
       'wave ' || t.auto_wave_generation || ' has no start time but this target is unfinished' AS detail
  FROM pc_artifact_processing_auto_wave_targets t
  JOIN pc_artifact_processing_binding_states b ON b.binding_name = t.binding_name
 WHERE t.completed_at IS NULL AND t.auto_wave_generation = b.auto_wave_generation
   AND b.auto_wave_started_at IS NULL
 ORDER BY t.binding_name, t.scope_id;
