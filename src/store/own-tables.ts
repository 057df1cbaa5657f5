/**
 * The tables of the supervisor and of the durable task system: written only by their operations
 * (procedures / scripts), never by a processor's or a handler's statements (RFC 6, ADR T5). The
 * MySQL accounts of processors and readers get no privilege on them (db-accounts); SQLite refuses
 * a statement whose prepared program opens one of them for writing. The legacy Topic tables of
 * PR #1490 (pc_artifact_processing_pending, _source_cursors, _auto_wave_targets) belong to the
 * Topic processor and are business tables.
 */
export const OWN_TABLES = [
  'pc_aps_ack_batch_items',
  'pc_aps_adoptions',
  'pc_aps_batch_ordinals',
  'pc_aps_candidate_fingerprints',
  'pc_aps_derived_accounts',
  'pc_aps_intake_batch_counter',
  'pc_aps_intake_batch_items',
  'pc_aps_invocation_secret',
  'pc_aps_procedure_checksums',
  'pc_aps_schema_migrations',
  'pc_aps_signals',
  'pc_artifact_processing_binding_states',
  'pc_artifact_processing_fence_slots',
  'pc_artifact_processing_intents',
  'pc_artifact_processing_lease_fences',
  'pc_artifact_processing_leases',
  'pc_artifact_processing_runtime',
  'pc_business_schema_versions',
  'pc_durable_task_control',
  'pc_durable_task_workers',
  'pc_durable_tasks',
  'pc_task_submit_batch_items',
  'pc_task_succeed_batch_items',
] as const;

const OWN = new Set<string>(OWN_TABLES);
/** Prefixes reserved for tables the supervisor or the task system may add later. */
const RESERVED = /^(?:pc_aps_|pc_durable_task|pc_task_)/i;

/** True for a table of the supervisor or the task system (case-insensitive, unqualified name). */
export function isOwnTable(name: string): boolean {
  const n = name.toLowerCase();
  return OWN.has(n) || RESERVED.test(n);
}
