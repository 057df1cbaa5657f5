/** The supervisor's operations (pc_aps_*): terms and fences, intents, scans, acknowledgements, modes (operation-spec.ts). */
import { TERM, type OperationSpec } from './operation-spec.ts';

export const SUPERVISOR_OPERATIONS = {
  pc_aps_acquire_term: {
    params: ['supervisor_key', 'holder_id', 'ttl_ms'],
    transaction: 'own',
    summary: 'take a free or expired term (generation + 1), extend a live own term, or report standby',
  },
  pc_aps_renew_term: {
    params: [...TERM, 'ttl_ms'],
    transaction: 'own',
    summary: 'the live holder extends its lease; generation unchanged; an expired term is lost',
  },
  pc_aps_invalidate_term: {
    params: ['supervisor_key', 'expected_holder_id', 'expected_generation'],
    transaction: 'own',
    summary: 'end a term (shutdown, mode switch): generation + 1, holder cleared',
  },
  pc_aps_read_lease: {
    params: ['supervisor_key'],
    transaction: 'read',
    summary: 'read the current term of a supervisor key and whether it is live',
  },
  pc_aps_assert_term: {
    params: [...TERM],
    transaction: 'caller',
    summary:
      "lock and validate the term on this connection's fence row (one of 32, written with the lease row on every term change) inside a business or control transaction; raises term_lost",
  },
  pc_aps_begin_fenced: {
    params: [...TERM],
    transaction: 'opens',
    summary: 'open a fenced business transaction in one call (START TRANSACTION + the term assertion; the caller writes and commits)',
  },
  pc_aps_mark_dirty: {
    params: ['binding_name', 'scope_id'],
    transaction: 'caller',
    summary: 'dirty_generation + 1 for a key (registers it on first use); no leadership needed',
  },
  pc_aps_accept_request: {
    params: ['binding_name', 'scope_id'],
    transaction: 'caller',
    summary: 'requested_generation + 1 for a key (registers it on first use); no leadership needed',
  },
  pc_aps_mark_dirty_batch: {
    params: ['binding_name', 'scope_ids', 'scope_ends'],
    transaction: 'caller',
    summary: 'batched intake: pc_aps_mark_dirty for up to 1000 keys of one binding in one call, item by item (a repeated key is marked twice)',
  },
  pc_aps_accept_request_batch: {
    params: ['binding_name', 'scope_ids', 'scope_ends'],
    transaction: 'caller',
    summary: 'batched intake: pc_aps_accept_request for up to 1000 keys of one binding in one call, item by item (a repeated key gets two requests)',
  },
  pc_aps_read_intent: {
    params: ['binding_name', 'scope_id'],
    transaction: 'read',
    summary: 'read the generations of one key (the snapshot an invocation starts from)',
  },
  pc_aps_read_intents: {
    params: ['binding_name', 'scope_ids'],
    transaction: 'read',
    summary: 'read the generations of up to 1000 keys of one binding in one call (the start snapshots of one dispatch turn)',
  },
  pc_aps_list_owed_requests: {
    params: ['binding_name', 'after_sequence', 'page_limit'],
    transaction: 'read',
    summary: 'page through keys with requested > handled, by pending_sequence',
  },
  pc_aps_list_dirty_keys: {
    params: ['binding_name', 'after_sequence', 'page_limit'],
    transaction: 'read',
    summary: 'page through keys with dirty > clean, by pending_sequence (operators: the web console; reads only)',
  },
  pc_aps_read_binding_state: {
    params: ['binding_name'],
    transaction: 'read',
    summary: 'read checkpoint and scan state of a binding, with the database clock',
  },
  pc_aps_begin_scan: {
    params: [...TERM, 'binding_name', 'policy', 'interval_seconds', 'cron_fire_at'],
    transaction: 'own',
    summary: 'fenced: resume the unfinished scan, or start one when the interval/cron is due',
  },
  pc_aps_admit_scan_page: {
    params: [...TERM, 'binding_name', 'scan_generation', 'after_sequence', 'page_limit', 'exclude_scope_ids'],
    transaction: 'own',
    summary: 'fenced, set-based: admit one page of dirty keys of the scan (request + scan mark)',
  },
  pc_aps_finish_scan: {
    params: [...TERM, 'binding_name', 'scan_generation'],
    transaction: 'own',
    summary: 'fenced: clear scan_in_progress of the scan generation',
  },
  pc_aps_ack_invocation: {
    params: [...TERM, 'binding_name', 'scope_id', 'claimed_request_generation', 'clean_through_dirty_generation'],
    transaction: 'caller',
    summary: 'fenced, in the business transaction: handled := claimed generation, optionally clean := snapshot dirty',
  },
  pc_aps_ack_invocation_token: {
    params: [...TERM, 'binding_name', 'scope_id', 'claimed_request_generation', 'clean_through_dirty_generation', 'invocation_token'],
    transaction: 'caller',
    summary: "a worker's pc_aps_ack_invocation, once the host's per-invocation token proves it is this invocation's (MySQL; not checked on SQLite)",
  },
  pc_aps_init_invocation_secret: {
    params: ['candidate'],
    transaction: 'own',
    summary: 'records the secret of the invocation tokens once (the first host wins) and returns it',
  },

  // ---- recorded mode and maintenance (mode switch, status) ----
  pc_aps_read_runtime_mode: {
    params: [],
    transaction: 'read',
    summary: 'read the recorded supervisor mode (NULL before the first start) and the maintenance flag',
  },
  pc_aps_claim_runtime_mode: {
    params: ['mode'],
    transaction: 'own',
    summary: 'a runtime start: record the mode when none is, accept the same, refuse the other (mode_mismatch) or during maintenance',
  },
  pc_aps_switch_mode: {
    params: ['to_mode'],
    transaction: 'own',
    summary: 'mode switch: refuse a live old-mode lease (live_candidate), invalidate every old-mode key the database holds, record the new mode',
  },
  pc_aps_register_candidate: {
    params: ['supervisor_key', 'candidate_id', 'role', 'shared_sha256', 'shared_text', 'execution_sha256', 'execution_text', 'ttl_ms'],
    transaction: 'own',
    summary: 'a start records its fingerprint for a supervisor key; conflict when a live candidate of the key runs with another one',
  },
  pc_aps_refresh_candidate: {
    params: ['candidate_id', 'ttl_ms'],
    transaction: 'own',
    summary: 'a running candidate keeps its fingerprint rows live (MySQL/OceanBase)',
  },
  pc_aps_withdraw_candidate: {
    params: ['candidate_id'],
    transaction: 'own',
    summary: 'a stopping or refused candidate removes its fingerprint rows',
  },
  pc_aps_read_mode_leases: {
    params: ['mode'],
    transaction: 'read',
    summary: 'every lease row of one mode the database holds (global, or every artifact:% key), with liveness',
  },
  pc_aps_acknowledge: {
    params: [...TERM, 'binding_name', 'scope_id', 'claimed_request_generation', 'clean_through_dirty_generation'],
    transaction: 'own',
    summary: 'pc_aps_ack_invocation in its own transaction, one call: an acknowledgement without business writes',
  },
  pc_aps_acknowledge_batch: {
    params: [...TERM, 'binding_name', 'scope_ids', 'claimed_generations', 'clean_throughs'],
    transaction: 'own',
    summary:
      'group commit of acknowledgements without business writes: pc_aps_ack_invocation semantics for up to 1000 keys of one binding in one transaction, one term check',
  },
  pc_aps_set_maintenance: {
    params: ['maintenance'],
    transaction: 'own',
    summary: 'maintenance window on/off: while on, dirty marks, explicit requests and runtime starts are refused (maintenance)',
  },
  pc_aps_read_family_backlog: {
    params: ['binding_name', 'count_cap'],
    transaction: 'read',
    summary: 'status: owed and ordinary-backlog key counts of one binding, each capped (bounded index reads)',
  },
  pc_aps_adopt_topic_memory_pr1490: {
    params: ['binding_name'],
    transaction: 'own',
    summary: 'adoption: PR #1490 pending/flush/auto-wave state -> intents, checkpoint and fenced lease, consistency-checked',
    installedBy: 'adoption',
  },
  pc_aps_adopt_profile_apscheduler: {
    params: ['binding_name', 'job_id', 'expected_job_state', 'expected_next_run_time', 'checkpoint_at'],
    transaction: 'own',
    summary: 'adoption: Profile APScheduler job -> cron checkpoint at the latest fire taken; the job is removed',
    installedBy: 'adoption',
  },

  // ---- durable tasks (src/tasks/task-store.ts) ----
} as const satisfies Record<string, OperationSpec>;
