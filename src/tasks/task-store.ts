/**
 * Durable task operations (pc_task_*), one method per operation, on either backend (with
 * task-admin-store.ts; test/tasks/store.test.ts covers both). Like the
 * supervisor's store it validates, calls the operation by name and maps rows; every decision
 * (dedupe, claim cap, attempt fencing, lease expiry by the database clock) is taken in SQL.
 */
import { InvalidArgumentError } from '../store/errors.ts';
import { TaskAdminStore } from './task-admin-store.ts';
import { dbTime } from '../store/rows.ts';
import { n, requireId, requireLease, requireRange, requireToken, requireWorker, sOrNull, toClaimed, typeList } from './task-rows.ts';
import { succeedBatchParams, toSuccessBatch } from './success-batch.ts';
import { submitBatchParams, submitColumns, toSubmitResults } from './submit-params.ts';
import type { TxHandle } from '../store/types.ts';
import type { ClaimRequest, ClaimedTask, LostOutcome, StopVerdict, SubmitInput, SubmitResult, SuccessItem, SuccessOutcome, TaskState } from './task-types.ts';
import { MAX_CLAIM_BATCH } from './task-types.ts';

export * from './task-types.ts';

/**
 * The attempt's life: submit, claim, heartbeat and progress, and every end of an attempt (success,
 * failure, cancellation, a lost or stopped attempt, the runner's verdict). Reads, listing and the
 * operator's calls are TaskAdminStore's.
 */
export class TaskStore extends TaskAdminStore {
  async assertAttempt(tx: TxHandle, taskId: number, attemptToken: string): Promise<void> {
    const op = 'pc_task_assert_attempt';
    requireId(op, taskId);
    requireToken(op, attemptToken);
    await this.rows(op, { task_id: taskId, attempt_token: attemptToken }, tx);
  }

  /** Whether a task is pending or running (pc_task_is_active); inside `tx` when given. */
  async isActive(taskId: number, tx?: TxHandle): Promise<boolean> {
    const op = 'pc_task_is_active';
    requireId(op, taskId);
    const [row] = await this.rows(op, { task_id: taskId }, tx);
    return Number(row?.active) === 1;
  }

  async submit(input: SubmitInput, tx?: TxHandle): Promise<SubmitResult> {
    const op = 'pc_task_submit';
    const rows = await this.rows(op, { ...submitColumns(op, input) }, tx);
    const r = rows[0];
    if (!r) throw new Error(`${op}: no result row`);
    return {
      taskId: n(r.task_id),
      state: String(r.state) as TaskState,
      outcome: String(r.outcome) as SubmitResult['outcome'],
      dedupeKey: sOrNull(r.dedupe_key),
    };
  }

  /**
   * Batched intake (pc_task_submit_batch): up to 1000 tasks in one call, inside the caller's
   * transaction like submit; results in input order, equal to the same single submits in order.
   */
  async submitBatch(inputs: readonly SubmitInput[], tx?: TxHandle): Promise<SubmitResult[]> {
    const op = 'pc_task_submit_batch';
    return toSubmitResults(await this.rows(op, submitBatchParams(inputs), tx), inputs);
  }

  /**
   * Claims the oldest pending task of one of taskTypes (the worker's registry), unless the
   * database cap of running tasks (ADR T6, pc_task_set_capacity) is reached.
   */
  async claim(workerId: string, leaseMs: number, taskTypes: readonly string[]): Promise<ClaimedTask | null> {
    const op = 'pc_task_claim';
    requireWorker(op, workerId);
    requireLease(op, leaseMs);
    const rows = await this.rows(op, { worker_id: workerId, lease_ms: leaseMs, task_types: typeList(op, taskTypes) });
    return rows[0] ? toClaimed(rows[0]) : null;
  }

  /**
   * Claims up to maxCount (1..100) of the oldest pending tasks of taskTypes in one transaction,
   * each as claim() claims one, never past the database cap; oldest first.
   */
  async claimBatch(workerId: string, leaseMs: number, taskTypes: readonly string[], maxCount: number): Promise<ClaimedTask[]> {
    const op = 'pc_task_claim_batch';
    requireWorker(op, workerId);
    requireLease(op, leaseMs);
    requireRange(op, 'max count', maxCount, 1, MAX_CLAIM_BATCH);
    const rows = await this.rows(op, { worker_id: workerId, lease_ms: leaseMs, task_types: typeList(op, taskTypes), max_count: maxCount });
    return rows.map(toClaimed).sort((a, b) => a.taskId - b.taskId);
  }

  async heartbeat(taskId: number, attemptToken: string, leaseMs: number): Promise<{ leaseExpiresAt: Date; cancelRequested: boolean; dbNow: Date }> {
    const op = 'pc_task_heartbeat';
    requireId(op, taskId);
    requireToken(op, attemptToken);
    requireLease(op, leaseMs);
    const r = (await this.rows(op, { task_id: taskId, attempt_token: attemptToken, lease_ms: leaseMs }))[0];
    return { leaseExpiresAt: dbTime(r.lease_expires_at)!, cancelRequested: n(r.cancel_requested) === 1, dbNow: dbTime(r.db_now)! };
  }

  async progress(
    taskId: number,
    attemptToken: string,
    p: { current?: number | null; total?: number | null; message?: string | null },
    minStep: number,
  ): Promise<{ persisted: boolean; cancelRequested: boolean }> {
    const op = 'pc_task_progress';
    requireId(op, taskId);
    requireToken(op, attemptToken);
    for (const [k, v] of [
      ['current', p.current],
      ['total', p.total],
      ['min step', minStep],
    ] as const) {
      if (v !== null && v !== undefined && !Number.isFinite(v)) throw new InvalidArgumentError(op, `${k} must be finite`);
    }
    const message = p.message === undefined || p.message === null ? null : String(p.message).slice(0, 1024);
    const r = (
      await this.rows(op, { task_id: taskId, attempt_token: attemptToken, current: p.current ?? null, total: p.total ?? null, message, min_step: minStep })
    )[0];
    return { persisted: n(r.persisted) === 1, cancelRequested: n(r.cancel_requested) === 1 };
  }

  complete(taskId: number, attemptToken: string, result: unknown, tx?: TxHandle): Promise<void> {
    return this.success('pc_task_complete', taskId, attemptToken, result, tx);
  }

  /** complete() in its own transaction (pc_task_succeed): one call for an attempt without onComplete writes. */
  succeed(taskId: number, attemptToken: string, result: unknown): Promise<void> {
    return this.success('pc_task_succeed', taskId, attemptToken, result);
  }

  private async success(op: 'pc_task_complete' | 'pc_task_succeed', taskId: number, attemptToken: string, result: unknown, tx?: TxHandle): Promise<void> {
    requireId(op, taskId);
    requireToken(op, attemptToken);
    await this.rows(op, { task_id: taskId, attempt_token: attemptToken, result: result === undefined ? null : JSON.stringify(result) }, tx);
  }

  /**
   * The runner's group commit of its workers' successes (pc_task_succeed_batch): one transaction,
   * each item decided by pc_task_complete's rules (a refused item writes nothing and reports why;
   * outcomes in input order), then up to claim.maxCount claims as claimBatch takes them (the
   * slots the successes freed count). resultJson is the result as JSON text (null stores NULL).
   */
  async succeedBatch(items: readonly SuccessItem[], claim?: ClaimRequest): Promise<{ outcomes: SuccessOutcome[]; claimed: ClaimedTask[] }> {
    const op = 'pc_task_succeed_batch';
    return toSuccessBatch(op, await this.store.callOperation(op, succeedBatchParams(op, items, claim)), items.length);
  }

  async fail(taskId: number, attemptToken: string, errorCode: string, errorMessage: string, tx?: TxHandle): Promise<void> {
    const op = 'pc_task_fail';
    requireId(op, taskId);
    requireToken(op, attemptToken);
    await this.rows(op, { task_id: taskId, attempt_token: attemptToken, error_code: errorCode.slice(0, 64), error_message: errorMessage.slice(0, 2048) }, tx);
  }

  async finishCancelled(taskId: number, attemptToken: string, tx?: TxHandle): Promise<void> {
    const op = 'pc_task_finish_cancelled';
    requireId(op, taskId);
    requireToken(op, attemptToken);
    await this.rows(op, { task_id: taskId, attempt_token: attemptToken }, tx);
  }

  async cancel(taskId: number): Promise<{ state: TaskState; outcome: 'cancelled' | 'cancel_requested' | 'already_terminal' }> {
    const op = 'pc_task_cancel';
    requireId(op, taskId);
    const r = (await this.rows(op, { task_id: taskId }))[0];
    return { state: String(r.state) as TaskState, outcome: String(r.outcome) as 'cancelled' };
  }

  /**
   * Reconciler: ends a lost attempt (running under expectedToken, lease expired by the database
   * clock). The outcome is decided in SQL under the row lock: 'gave_up' (giveUp), 'cancelled'
   * (cancel requested), 'requeued' / 'exhausted' (requeue, bounded by maxAttempts), 'failed'.
   */
  async expireLost(
    taskId: number,
    expectedToken: string,
    requeue: boolean,
    tx?: TxHandle,
    opts: { maxAttempts?: number; giveUp?: boolean } = {},
  ): Promise<LostOutcome> {
    const op = 'pc_task_expire_lost';
    requireId(op, taskId);
    requireToken(op, expectedToken);
    const maxAttempts = opts.maxAttempts ?? 1_000_000;
    requireRange(op, 'max attempts', maxAttempts, 1, 1_000_000);
    const r = (
      await this.rows(
        op,
        { task_id: taskId, expected_token: expectedToken, requeue: requeue ? 1 : 0, max_attempts: maxAttempts, give_up: opts.giveUp ? 1 : 0 },
        tx,
      )
    )[0];
    return String(r.outcome) as LostOutcome;
  }

  /**
   * Runner: ends a live attempt whose worker stopped without a terminal write (fenced by the
   * attempt): 'cancelled' (cancel requested), 'requeued' / 'exhausted' (requeue, bounded by
   * maxAttempts), else 'failed' with the given code.
   */
  async endAttempt(
    taskId: number,
    attemptToken: string,
    opts: { requeue: boolean; maxAttempts: number; errorCode: string; errorMessage: string; workerExited: boolean },
    tx?: TxHandle,
  ): Promise<'failed' | 'requeued' | 'exhausted' | 'cancelled'> {
    const op = 'pc_task_end_attempt';
    requireId(op, taskId);
    requireToken(op, attemptToken);
    requireRange(op, 'max attempts', opts.maxAttempts, 1, 1_000_000);
    const r = (
      await this.rows(
        op,
        {
          task_id: taskId,
          attempt_token: attemptToken,
          requeue: opts.requeue ? 1 : 0,
          max_attempts: opts.maxAttempts,
          error_code: opts.errorCode.slice(0, 64),
          error_message: opts.errorMessage.slice(0, 2048),
          worker_exited: opts.workerExited ? 1 : 0,
        },
        tx,
      )
    )[0];
    return String(r.outcome) as 'failed';
  }

  /**
   * Runner: records the verdict it reached for a running attempt before stopping its worker
   * (fenced by the token only; the first verdict, or an earlier cancel, wins).
   */
  async recordVerdict(taskId: number, attemptToken: string, verdict: StopVerdict): Promise<'recorded' | 'kept' | 'cancel_first'> {
    const op = 'pc_task_record_verdict';
    requireId(op, taskId);
    requireToken(op, attemptToken);
    if (verdict !== 'timeout' && verdict !== 'interrupted_by_shutdown') throw new InvalidArgumentError(op, `unknown verdict ${String(verdict)}`);
    const r = (await this.rows(op, { task_id: taskId, attempt_token: attemptToken, verdict }))[0];
    return String(r.outcome) as 'recorded';
  }
}
