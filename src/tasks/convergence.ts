/**
 * Ends attempts that cannot write their own terminal state (ADR T8): the outcome (decided in SQL
 * under the row lock), the failure hook and the terminal write commit in one transaction fenced
 * by the attempt token, bounded in time (FAILURE_HOOK_TIMEOUT_SECONDS; issue 17 item 4).
 *   exited   the runner saw the worker process exit: pc_task_end_attempt with worker_exited, so
 *            its verdict is recorded whatever the lease did meanwhile.
 *   expired  an attempt of another (or a vanished) runner whose lease expired: pc_task_expire_lost.
 * A hook that fails, times out or cannot be imported leaves the attempt running (logged at error
 * level; the import is retried); after FAILURE_HOOK_MAX_ATTEMPTS failed convergences of the same
 * attempt the task fails with failure_hook_failed without it, releasing its slot and dedupe key.
 */
import { isInstanceOf } from '../child/ts-loader.ts';
import type { Logger } from '../logging.ts';
import { AttemptLostError } from '../store/errors.ts';
import { txQuery } from '../store/tx-query.ts';
import type { TxHandle } from '../store/types.ts';
import { boundedTransaction } from './bounded-transaction.ts';
import type { TaskConfig } from './config.ts';
import type { TaskHandlerModule, TaskIdentity } from './handler.ts';
import { UnknownHandlerError, type TaskRegistry } from './registry.ts';
import type { LostOutcome, TaskStore } from './task-store.ts';
import { withScopedTx } from '../store/scoped-tx.ts';

export interface AttemptRef {
  taskId: number;
  taskType: string;
  handlerVersion: number;
  attemptToken: string;
}
export interface Ending {
  path: 'exited' | 'expired';
  code: string;
  message: string;
  requeue: boolean;
  payload?: unknown;
  attemptCount?: number;
}
/** converged: terminal or requeued (outcome); gone: another owner ended it first; retry: try again later. */
export type ConvergeResult = { result: 'converged'; outcome: LostOutcome } | { result: 'gone' | 'retry' };

type Hook = NonNullable<TaskHandlerModule['failureHook']>;

export class Converger {
  /** Failed convergences per attempt (taskId:token). */
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly tasks: TaskStore,
    private readonly registry: TaskRegistry,
    private readonly config: TaskConfig,
    private readonly logger: Logger,
  ) {}

  async converge(t: AttemptRef, e: Ending): Promise<ConvergeResult> {
    const key = `${t.taskId}:${t.attemptToken}`;
    const failures = this.failures.get(key) ?? 0;
    const giveUp = failures >= this.config.failureHookMaxAttempts;
    let requeue = false;
    try {
      requeue = e.requeue && Boolean(this.registry.definition(t.taskType).idempotentSideEffects);
    } catch {
      /* unknown type: fail */
    }
    let hook: Hook | null = null;
    if (!giveUp) {
      try {
        hook = (await this.registry.load(t.taskType, t.handlerVersion)).failureHook ?? null;
      } catch (error) {
        // Unknown type or version: there is no hook to run (fail closed). Anything else is a hook
        // that exists but cannot run here: never end the task without it.
        if (!(error instanceof UnknownHandlerError)) return this.failed(t, key, failures, error, 'the failure hook module could not be imported');
      }
    }
    try {
      const outcome = await boundedTransaction(this.tasks.store, this.config.failureHookTimeoutMs, async (tx, guarded) => {
        const r = await this.end(t, e, tx, giveUp, requeue);
        if (hook && (r === 'failed' || r === 'exhausted' || r === 'cancelled')) {
          const detail = await this.tasks.read(t.taskId, tx);
          const identity: TaskIdentity = { ...t, attemptCount: detail?.attemptCount ?? e.attemptCount ?? 0, payload: detail?.payload ?? e.payload };
          const backend = this.tasks.store.backend;
          // The hook's handle is scoped too (ADR T5): only statements of this transaction.
          await withScopedTx(guarded, backend, (scoped) => hook!(scoped, identity, { query: txQuery, backend }));
        }
        return r;
      });
      this.failures.delete(key);
      if (outcome === 'not_lost') return { result: 'gone' };
      if (outcome === 'gave_up') {
        this.logger.error(
          { taskId: t.taskId, taskType: t.taskType, errorCode: 'failure_hook_failed', failedConvergences: failures },
          'TASK FAILED WITHOUT ITS FAILURE HOOK: the hook kept failing; its domain rows were not converged and need repair by hand',
        );
      } else {
        this.logger.warn({ taskId: t.taskId, taskType: t.taskType, errorCode: e.code, outcome }, 'task attempt converged');
      }
      return { result: 'converged', outcome };
    } catch (error) {
      // isInstanceOf: a hook may throw its own (source) copy of the class into a precompiled CLI.
      if (isInstanceOf(error, AttemptLostError)) {
        // the attempt already ended (or another owner took over)
        this.failures.delete(key);
        return { result: 'gone' };
      }
      return this.failed(t, key, failures, error, 'task convergence failed; it is retried');
    }
  }

  private failed(t: AttemptRef, key: string, failures: number, error: unknown, message: string): ConvergeResult {
    this.failures.set(key, failures + 1);
    this.logger.error(
      { taskId: t.taskId, taskType: t.taskType, err: (error as Error).message, failedConvergences: failures + 1, limit: this.config.failureHookMaxAttempts },
      message,
    );
    return { result: 'retry' };
  }

  private async end(t: AttemptRef, e: Ending, tx: TxHandle, giveUp: boolean, requeue: boolean): Promise<LostOutcome> {
    const maxAttempts = this.config.maxAttempts;
    if (e.path === 'expired' || giveUp) {
      const r = await this.tasks.expireLost(t.taskId, t.attemptToken, requeue, tx, { maxAttempts, giveUp });
      if (r !== 'not_lost' || e.path === 'expired') return r;
      // Giving up on an exited worker whose lease is still live: fail it, fenced by the attempt.
      await this.tasks.fail(
        t.taskId,
        t.attemptToken,
        'failure_hook_failed',
        `${e.message}; the failure hook kept failing, the domain rows were not converged`,
        tx,
      );
      return 'gave_up';
    }
    return this.tasks.endAttempt(t.taskId, t.attemptToken, { requeue, maxAttempts, errorCode: e.code, errorMessage: e.message, workerExited: true }, tx);
  }
}
