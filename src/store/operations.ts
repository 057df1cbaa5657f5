/**
 * The operation catalogue: one name per operation, the same on both backends.
 * `params` is the positional parameter order of the stored procedure (p_<name>) and the set of
 * named parameters (:<name>) of the SQLite script. `transaction` says who owns the transaction:
 *   own     the procedure/script starts and commits its own transaction; never inside a caller's
 *   caller  runs inside the caller's transaction; called alone, the adapter opens one around it
 *   read    a plain read; inside a caller's transaction it reads that transaction's view
 *   opens   starts the caller's transaction and leaves it open (Store.fencedTransaction); on
 *           SQLite the adapter's BEGIN IMMEDIATE comes first and the script runs inside it
 * test/catalogue.test.ts checks the SQL files against this table.
 */
export type TransactionMode = 'own' | 'caller' | 'read' | 'opens';

export interface OperationSpec {
  params: readonly string[];
  transaction: TransactionMode;
  summary: string;
  /**
   * 'adoption': a conversion of `apsup migrate adopt` that reads tables existing only in a
   * database being adopted; its MySQL procedure is installed by the adoption plan right before it
   * runs (not by a `-- @procedure` line of the main chain) and dropped afterwards.
   */
  installedBy?: 'adoption';
  /**
   * Internal procedures only: sql/sqlite/<name>.sql holds the same body as a script that the
   * operations' scripts `-- @include` (never run on its own).
   */
  sqliteInclude?: true;
}

const TERM = ['supervisor_key', 'holder_id', 'supervisor_generation'] as const;

export const OPERATIONS = {
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
  pc_task_assert_attempt: {
    params: ['task_id', 'attempt_token'],
    transaction: 'caller',
    summary: 'lock and validate a task attempt (running, same token, unexpired lease); raises attempt_lost',
  },
  pc_task_submit: {
    params: ['task_type', 'handler_version', 'payload', 'dedupe_key', 'timeout_ms', 'resumed_from_task_id'],
    transaction: 'caller',
    summary: 'persist a pending task; an active task with the same dedupe key is returned instead',
  },
  pc_task_submit_batch: {
    params: [
      'task_types',
      'task_type_ends',
      'handler_versions',
      'payloads',
      'payload_ends',
      'dedupe_keys',
      'dedupe_key_ends',
      'timeouts_ms',
      'resumed_from_task_ids',
    ],
    transaction: 'caller',
    summary: "batched intake: pc_task_submit for up to 1000 tasks in one call, item by item (an earlier item's active task dedupes a later one)",
  },
  pc_task_claim: {
    params: ['worker_id', 'lease_ms', 'task_types'],
    transaction: 'own',
    summary: 'claim the oldest pending task of a known type with a fresh attempt token, unless the database cap of running tasks is reached',
  },
  pc_task_claim_batch: {
    params: ['worker_id', 'lease_ms', 'task_types', 'max_count'],
    transaction: 'own',
    summary: 'claim up to max_count of the oldest pending tasks of known types in one transaction, never past the database cap',
  },
  pc_task_set_capacity: {
    params: ['capacity'],
    transaction: 'own',
    summary: 'set the database claim cap of running durable tasks (4 after migrate up)',
  },
  pc_task_heartbeat: {
    params: ['task_id', 'attempt_token', 'lease_ms'],
    transaction: 'own',
    summary: 'extend the lease of the current attempt; returns cancel_requested',
  },
  pc_task_progress: {
    params: ['task_id', 'attempt_token', 'current', 'total', 'message', 'min_step'],
    transaction: 'own',
    summary: 'fenced progress, throttled by numeric increments, a new message always persisted',
  },
  pc_task_complete: {
    params: ['task_id', 'attempt_token', 'result'],
    transaction: 'caller',
    summary: 'fenced terminal success; owner, lease and dedupe key released',
  },
  pc_task_succeed: {
    params: ['task_id', 'attempt_token', 'result'],
    transaction: 'own',
    summary: 'fenced terminal success in its own transaction (an attempt without ctx.onComplete writes)',
  },
  pc_task_succeed_batch: {
    params: ['task_ids', 'attempt_tokens', 'attempt_token_ends', 'results', 'result_ends', 'worker_id', 'lease_ms', 'task_types', 'max_count'],
    transaction: 'own',
    summary:
      "the runner's group commit of its workers' successes (pc_task_complete per item, a refused item reports why) and the claims that take their places, one transaction",
  },
  pc_task_fail: {
    params: ['task_id', 'attempt_token', 'error_code', 'error_message'],
    transaction: 'caller',
    summary: 'fenced terminal failure (the failure hook runs in the same transaction)',
  },
  pc_task_finish_cancelled: {
    params: ['task_id', 'attempt_token'],
    transaction: 'caller',
    summary: 'fenced end of a running task whose cancel was requested',
  },
  pc_task_cancel: {
    params: ['task_id'],
    transaction: 'own',
    summary: 'cancel a pending task at once, record the intent for a running one',
  },
  pc_task_expire_lost: {
    params: ['task_id', 'expected_token', 'requeue', 'max_attempts', 'give_up'],
    transaction: 'caller',
    summary: 'reconciler: fail, cancel, requeue (bounded) or give up on a running task whose lease expired under the expected token',
  },
  pc_task_end_attempt: {
    params: ['task_id', 'attempt_token', 'requeue', 'max_attempts', 'error_code', 'error_message', 'worker_exited'],
    transaction: 'caller',
    summary: 'runner: end an attempt whose worker stopped without a terminal write, with its verdict (fail, cancel or bounded requeue)',
  },
  pc_task_record_verdict: {
    params: ['task_id', 'attempt_token', 'verdict'],
    transaction: 'own',
    summary: 'runner: record the verdict reached for a running attempt (timeout, shutdown) before stopping its worker',
  },
  pc_task_list_lost: {
    params: ['page_limit', 'task_types'],
    transaction: 'read',
    summary: 'running tasks of the known types whose lease expired',
  },
  pc_task_list: {
    params: ['before_task_id', 'page_limit', 'state'],
    transaction: 'read',
    summary: 'task summaries, newest first, keyset pagination',
  },
  pc_task_read: {
    params: ['task_id'],
    transaction: 'read',
    summary: 'one task in full',
  },
  pc_task_delete: {
    params: ['task_id'],
    transaction: 'own',
    summary: 'delete a terminal task',
  },
  pc_task_prune: {
    params: ['finished_before', 'page_limit'],
    transaction: 'own',
    summary: 'delete terminal tasks finished before a time',
  },
  pc_task_publish_readiness: {
    params: ['worker_id', 'ttl_ms'],
    transaction: 'own',
    summary: 'publish a task worker readiness fact with a short TTL',
  },
  pc_task_count_active: {
    params: ['cap'],
    transaction: 'read',
    summary: 'active tasks per state and type for /metrics (bounded read)',
  },
  pc_task_probe_pending: {
    params: ['task_types'],
    transaction: 'read',
    summary: 'wake-up probe: whether a task of a known type is pending and the database cap is not reached',
  },
  pc_task_withdraw_readiness: {
    params: ['worker_id'],
    transaction: 'own',
    summary: 'delete the readiness fact of a task worker that stops cleanly',
  },
  pc_task_read_readiness: {
    params: [],
    transaction: 'read',
    summary: 'number of live task workers',
  },
} as const satisfies Record<string, OperationSpec>;

export type OperationName = keyof typeof OPERATIONS;
export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

/**
 * Procedures that only other procedures call (no Store method). Installed and pinned by
 * migrations like the operations. MySQL-only (on SQLite the database write lock of BEGIN
 * IMMEDIATE is the fence; their files are in procedures/oceanbase/internal/), unless
 * `sqliteInclude`: then the SQLite scripts include its twin, beside the operations.
 */
export const INTERNAL_PROCEDURES = {
  pc_aps_intake_batch: {
    params: ['counter', 'binding_name', 'scope_ids', 'scope_ends'],
    transaction: 'caller',
    summary: 'the one body of pc_aps_mark_dirty_batch and pc_aps_accept_request_batch: set-based intake of up to 1000 items, the counter the only difference',
    sqliteInclude: true,
  },
  pc_aps_task_complete_attempt: {
    params: ['task_id', 'attempt_token', 'result'],
    transaction: 'caller',
    summary: 'the one text of the success rules (fence, recorded cancel, timeout verdict, the update), called by pc_task_complete and pc_task_succeed_batch',
  },
  pc_aps_task_claim_rows: {
    params: ['worker_id', 'lease_ms', 'task_types', 'max_count'],
    transaction: 'caller',
    summary: 'the one body of the claims of pc_task_claim_batch and pc_task_succeed_batch: up to max_count oldest pending tasks, never past the database cap',
    sqliteInclude: true,
  },
  pc_aps_write_fences: {
    params: [...TERM],
    transaction: 'caller',
    summary: 'the one writer of the 32 fence rows of a key (holder, generation), called by every term change',
  },
} as const satisfies Record<string, OperationSpec>;

export type InternalProcedureName = keyof typeof INTERNAL_PROCEDURES;
export const INTERNAL_PROCEDURE_NAMES = Object.keys(INTERNAL_PROCEDURES) as InternalProcedureName[];
