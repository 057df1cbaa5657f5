/**
 * One task attempt inside a task worker process: the process's database connection (kept across
 * its attempts; every transaction of the attempt ends before it reports, and a write the handler
 * leaves behind is still fenced by this attempt's token), a read handle of its own (opened on
 * first use, closed after the attempt), the registry and handler module of the process's module
 * isolation (handler-modules.ts: kept per process and re-imported when their file changed, or
 * fresh per attempt), heartbeats that keep the lease, and every domain, progress and terminal
 * write fenced by the attempt (token + unexpired lease, database clock); the failure hook runs
 * inside the terminal transaction (failure, and cancellation after the handler's own cleanup).
 */
import { isInstanceOf } from '../child/ts-loader.ts';
import type { DatabaseTarget } from '../config/database-url.ts';
import type { Logger } from '../logging.ts';
import { AttemptLostError } from '../store/errors.ts';
import { lazyReadHandle, openReadHandle } from '../store/read-handle.ts';
import { withScopedTx, type Tx } from '../store/scoped-tx.ts';
import type { BaseStore } from '../store/base-store.ts';
import { TaskCancelledError, type TaskContext, type TaskHandlerModule, type TaskIdentity } from './handler.ts';
import type { HandlerModules } from './handler-modules.ts';
import { UnknownHandlerError } from './registry.ts';
import { TaskStore } from './task-store.ts';
import type { RunTaskMessage, TaskOutcomeStatus, TaskResultMessage, TerminateMessage } from './worker-protocol.ts';

/** What the process's signal handlers tell the running attempt. */
export interface AttemptControl {
  /** Set by SIGTERM: the attempt must stop (its ctx.signal is aborted). */
  terminating: boolean;
  /** The host's reason (IPC, before SIGTERM): after 'timeout' or 'lost' a late success is not recorded. */
  terminateReason: TerminateMessage['reason'] | null;
  abort: ((reason: Error) => void) | null;
}

const cancelled = (e: unknown) => isInstanceOf(e, TaskCancelledError);
const lostError = (e: unknown) => isInstanceOf(e, AttemptLostError);

/** What the process keeps across its attempts. */
export interface AttemptEnvironment {
  target: DatabaseTarget;
  /** The reader account's target (session-accounts.ts), else target. */
  readerTarget?: DatabaseTarget;
  store: BaseStore;
  modules: HandlerModules;
  logger: Logger;
}

/** An AbortController made when its signal is first read; an abort before that is kept (the first reason wins). */
function lazyAbortController(): { abort: (reason: Error) => void; readonly signal: AbortSignal } {
  let controller: AbortController | null = null;
  let reason: Error | null = null;
  return {
    abort(r) {
      if (controller) controller.abort(r);
      else reason ??= r;
    },
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (reason) controller.abort(reason);
      }
      return controller.signal;
    },
  };
}

export async function runAttempt(message: RunTaskMessage, control: AttemptControl, env: AttemptEnvironment): Promise<TaskResultMessage> {
  const { task } = message;
  const { target, store, modules, logger } = env;
  // The handler's reads: a connection of its own on which the database refuses writes (ADR T5).
  const readerTarget = env.readerTarget ?? target;
  const read = lazyReadHandle(target.backend, () => openReadHandle(readerTarget));
  const tasks = new TaskStore(store);
  const query = (tx: Tx, sql: string, params?: unknown[]) => tx.query(sql, params);
  const hook = (tx: import('../store/types.ts').TxHandle, h: { failureHook?: TaskHandlerModule['failureHook'] }) =>
    withScopedTx(tx, store.backend, (scoped) => h.failureHook?.(scoped, identity, { query, backend: store.backend }));
  // The driver handle of each open commit's scoped handle, for ctx.taskActive (never given out).
  const raws = new WeakMap<Tx, import('../store/types.ts').TxHandle>();
  const controller = lazyAbortController();
  control.abort = (reason) => controller.abort(reason);
  if (control.terminating) controller.abort(new Error('the worker is shutting down'));
  let cancelRequested = false;
  const sawCancel = () => {
    if (cancelRequested) return;
    cancelRequested = true;
    // A handler blocked in I/O without control points can react to the cancel through ctx.signal.
    controller.abort(new TaskCancelledError());
  };
  let lost = false;
  const identity: TaskIdentity = {
    taskId: task.taskId,
    taskType: task.taskType,
    handlerVersion: task.handlerVersion,
    attemptToken: task.attemptToken,
    attemptCount: task.attemptCount,
    payload: task.payload,
    resumedFromTaskId: task.resumedFromTaskId,
  };
  const result = (status: TaskOutcomeStatus, errorCode?: string, errorMessage?: string): TaskResultMessage => ({
    type: 'task-result',
    taskId: task.taskId,
    status,
    errorCode,
    errorMessage,
  });
  const controlPoint = () => {
    if (lost) throw new AttemptLostError('task control point');
    if (cancelRequested) throw new TaskCancelledError();
  };
  const heartbeat = async () => {
    try {
      const hb = await tasks.heartbeat(task.taskId, task.attemptToken, message.leaseMs);
      if (hb.cancelRequested) sawCancel();
    } catch (error) {
      if (lostError(error)) {
        lost = true;
        controller.abort(error as Error);
      }
      throw error;
    }
  };
  const timer = setInterval(
    () => {
      heartbeat().catch(() => undefined);
    },
    Math.max(200, Math.floor(message.leaseMs / 3)),
  );
  // Importing the registry or the handler must not run on the claim's lease: renew at once then.
  // A handler already imported starts at once, well inside the lease the claim just granted.
  if (!modules.isLoaded(task.taskType, task.handlerVersion)) heartbeat().catch(() => undefined);
  try {
    const { registry } = await modules.forAttempt(task.taskType, task.handlerVersion);
    let handler: TaskHandlerModule;
    try {
      handler = await registry.load(task.taskType, task.handlerVersion);
    } catch (error) {
      if (error instanceof UnknownHandlerError) {
        // no module, hence no hook: fail closed here
        await tasks.transaction(async (tx) => tasks.fail(task.taskId, task.attemptToken, error.code, error.message, tx));
        return result('failed', error.code, error.message);
      }
      // The module (and its failure hook) exists but cannot be imported here: no terminal write
      // without the hook; the runner converges the attempt with it (retrying the import).
      return result('load_failed', 'handler_load_failed', (error as Error).message);
    }
    let finalizer: ((tx: Tx) => Promise<void> | void) | null = null;
    const ctx: TaskContext = {
      ...identity,
      backend: store.backend,
      read,
      // Made on first use: most handlers never read them, and each costs the attempt (pino child, AbortSignal).
      get logger() {
        const child = logger.child({ taskId: task.taskId, taskType: task.taskType, attempt: task.attemptCount });
        Object.defineProperty(this, 'logger', { value: child });
        return child;
      },
      get signal() {
        return controller.signal;
      },
      async heartbeat() {
        await heartbeat();
        controlPoint();
      },
      async progress(current, total, msg) {
        try {
          const p = await tasks.progress(task.taskId, task.attemptToken, { current, total, message: msg }, message.progressMinStep);
          if (p.cancelRequested) sawCancel();
        } catch (error) {
          if (lostError(error)) lost = true;
          throw error;
        }
        controlPoint();
      },
      async commit(fn) {
        return tasks.transaction(async (tx) => {
          await tasks.assertAttempt(tx, task.taskId, task.attemptToken);
          const value = await withScopedTx(tx, store.backend, (scoped) => {
            raws.set(scoped, tx);
            return fn(scoped);
          });
          // The callback may have waited (locks, I/O) past the lease: verify the attempt again,
          // by the database clock, before the domain writes can commit; a lost attempt rolls back.
          await tasks.assertAttempt(tx, task.taskId, task.attemptToken);
          return value;
        });
      },
      onComplete(fn) {
        finalizer = fn;
      },
      query,
      async taskActive(tx, taskId) {
        // In the commit's own transaction (SQLite: its one connection is held by it).
        const raw = raws.get(tx);
        if (!raw) throw new Error('ctx.taskActive needs the handle of an open ctx.commit');
        return tasks.isActive(taskId, raw);
      },
    };
    try {
      const value = await handler.run(task.payload, ctx);
      if (control.terminateReason === 'timeout' || control.terminateReason === 'lost') {
        return result('interrupted', 'interrupted_by_shutdown', `the handler returned after the attempt was stopped (${control.terminateReason})`);
      }
      const onComplete = finalizer as ((tx: Tx) => Promise<void> | void) | null;
      // Without ctx.onComplete writes the host commits the success with others (its group
      // commit); it refuses it as pc_task_complete would (a recorded cancel, a lost lease) and
      // then ends the attempt itself. A result that is not JSON fails here, as a success would.
      if (!onComplete) return { ...result('returned'), resultJson: JSON.stringify(value ?? null) ?? 'null' };
      await tasks
        .transaction(async (tx) => {
          await tasks.assertAttempt(tx, task.taskId, task.attemptToken); // locks the task row first
          await withScopedTx(tx, store.backend, (scoped) => {
            raws.set(scoped, tx);
            return onComplete(scoped);
          });
          await tasks.complete(task.taskId, task.attemptToken, value ?? null, tx);
        })
        .catch((error: unknown) => {
          // A cancel recorded before this success wins (pc_task_complete): end cancelled below.
          if ((error as { code?: unknown }).code === 'cancel_requested') cancelRequested = true;
          throw error;
        });
      return result('succeeded');
    } catch (error) {
      if (lostError(error) || lost) return result('attempt_lost', 'attempt_lost', (error as Error).message);
      // Stopped by SIGTERM: no terminal write here; the host decides (requeue or failure + hook).
      if (control.terminating && !cancelled(error)) return result('interrupted', 'interrupted_by_shutdown', (error as Error).message);
      if (cancelled(error) || cancelRequested) {
        // After the handler's own cleanup, the failure hook converges what still belongs to the
        // task (e.g. a dataset left 'generating') in the same terminal transaction.
        await tasks.transaction(async (tx) => {
          await tasks.assertAttempt(tx, task.taskId, task.attemptToken);
          await hook(tx, handler);
          await tasks.finishCancelled(task.taskId, task.attemptToken, tx);
        });
        return result('cancelled');
      }
      const code = (error as { code?: unknown }).code;
      const errorCode = typeof code === 'string' && /^[a-z_]{1,64}$/.test(code) ? code : 'handler_failed';
      await tasks.transaction(async (tx) => {
        await tasks.assertAttempt(tx, task.taskId, task.attemptToken);
        await hook(tx, handler);
        await tasks.fail(task.taskId, task.attemptToken, errorCode, (error as Error).message ?? String(error), tx);
      });
      return result('failed', errorCode, (error as Error).message);
    }
  } catch (error) {
    if (lostError(error)) return result('attempt_lost', 'attempt_lost', (error as Error).message);
    throw error;
  } finally {
    clearInterval(timer);
    control.abort = null;
    await read.close();
  }
}
