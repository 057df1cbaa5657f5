/**
 * pc_task_succeed_batch's parameters and result (the runner's group commit of its workers'
 * successes, TaskStore.succeedBatch): the items as fixed-width task ids and indexed lists
 * (procedures/oceanbase/COMPATIBILITY.md row 111), the claim that rides along, and the outcomes
 * in input order after the claimed rows.
 */
import { InvalidArgumentError } from '../store/errors.ts';
import { fixed, indexedList } from '../store/intake-batch.ts';
import type { Params } from '../store/params.ts';
import type { Row } from '../store/rows.ts';
import { requireId, requireLease, requireRange, requireToken, requireWorker, toClaimed, typeList } from './task-rows.ts';
import { MAX_CLAIM_BATCH, MAX_SUCCESS_BATCH, type ClaimRequest, type ClaimedTask, type SuccessItem, type SuccessOutcome } from './task-types.ts';

const SUCCESS_OUTCOMES = new Set<string>(['succeeded', 'task_not_found', 'attempt_lost', 'cancel_requested']);
const NO_CLAIM: ClaimRequest = { workerId: 'none', leaseMs: 1000, taskTypes: ['none'], maxCount: 0 };

export function succeedBatchParams(op: string, items: readonly SuccessItem[], claim: ClaimRequest = NO_CLAIM): Params {
  if (items.length < 1 || items.length > MAX_SUCCESS_BATCH)
    throw new InvalidArgumentError(op, `a batch holds 1..${MAX_SUCCESS_BATCH} items, got ${items.length}`);
  const seen = new Set<number>();
  for (const item of items) {
    requireId(op, item.taskId);
    requireToken(op, item.attemptToken);
    if (seen.has(item.taskId)) throw new InvalidArgumentError(op, `task ${item.taskId} appears twice`);
    seen.add(item.taskId);
    if (item.resultJson !== null && (typeof item.resultJson !== 'string' || item.resultJson === '')) {
      throw new InvalidArgumentError(op, 'a result is JSON text or null');
    }
  }
  requireWorker(op, claim.workerId);
  requireLease(op, claim.leaseMs);
  requireRange(op, 'max count', claim.maxCount, 0, MAX_CLAIM_BATCH);
  const tokens = indexedList(items.map((i) => i.attemptToken));
  const results = indexedList(items.map((i) => i.resultJson ?? ''));
  return {
    task_ids: items.map((i) => fixed(i.taskId, 18)).join(''),
    attempt_tokens: tokens.text,
    attempt_token_ends: tokens.ends,
    results: results.text,
    result_ends: results.ends,
    worker_id: claim.workerId,
    lease_ms: claim.leaseMs,
    task_types: typeList(op, claim.taskTypes),
    max_count: claim.maxCount,
  };
}

/** The claimed rows (when any were asked for), then the outcomes row. */
export function toSuccessBatch(op: string, sets: Row[][], itemCount: number): { outcomes: SuccessOutcome[]; claimed: ClaimedTask[] } {
  const row = sets.at(-1)?.[0];
  const outcomes = String(row?.outcomes ?? '').split(',');
  if (outcomes.length !== itemCount || outcomes.some((o) => !SUCCESS_OUTCOMES.has(o))) throw new Error(`${op}: unexpected result ${JSON.stringify(row)}`);
  const claimed = sets.length > 1 ? sets[0]!.map(toClaimed).sort((a, b) => a.taskId - b.taskId) : [];
  return { outcomes: outcomes as SuccessOutcome[], claimed };
}
