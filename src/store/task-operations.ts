/** The durable tasks' operations (pc_task_*): submit, claim, the attempt's ends, readiness, the cap (operation-spec.ts). */
import type { OperationSpec } from './operation-spec.ts';

export const TASK_OPERATIONS = {
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
  pc_task_is_active: {
    params: ['task_id'],
    transaction: 'read',
    summary: "whether a task is pending or running (a handler's question about its domain row's owner; no other field of the task)",
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
  pc_task_read_capacity: {
    params: [],
    transaction: 'read',
    summary: 'the database claim cap of durable tasks and the running count (the web console)',
  },
  pc_task_read_readiness: {
    params: [],
    transaction: 'read',
    summary: 'number of live task workers',
  },
} as const satisfies Record<string, OperationSpec>;
