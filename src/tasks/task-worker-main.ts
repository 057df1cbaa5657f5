/**
 * Task worker child process: runs one claimed task attempt. Rebuilds its own database connection,
 * loads the task type's registry module and, lazily, the handler module of the task's version.
 * Heartbeats keep the lease; every domain, progress and terminal write is fenced by the attempt
 * (token + unexpired lease, database clock); the failure hook runs inside the terminal transaction
 * (failure, and cancellation after the handler's own cleanup).
 *
 * SIGTERM (graceful shutdown of the host, or a timeout) aborts ctx.signal and gives the handler
 * up to the host's TERMINATE_GRACE_SECONDS (less a margin to report) to return; an attempt that
 * does not finish in that window is reported 'interrupted' without a terminal write, and the
 * host converges it (requeue of idempotent types, or failure with its failure hook). SIGINT is
 * ignored: a terminal's Ctrl-C reaches the whole process group, and the host decides.
 */
import { DATABASE_URL_VARIABLE, parseDatabaseUrl } from '../config/database-url.ts';
import { createLogger } from '../logging.ts';
import { AttemptLostError } from '../store/errors.ts';
import { openStore } from '../store/open.ts';
import { lazyReadHandle, openReadHandle } from '../store/read-handle.ts';
import { withScopedTx, type Tx } from '../store/scoped-tx.ts';
import type { BaseStore } from '../store/base-store.ts';
import { TaskCancelledError, type TaskContext, type TaskIdentity } from './handler.ts';
import { loadTaskRegistry } from './load.ts';
import { UnknownHandlerError } from './registry.ts';
import { TaskStore, type ClaimedTask } from './task-store.ts';

export interface RunTaskMessage {
  type: 'run-task';
  task: ClaimedTask;
  tasksModule: string;
  leaseMs: number;
  progressMinStep: number;
  /** The host's TERMINATE_GRACE_SECONDS in ms: how long a SIGTERM'd attempt may take to stop. */
  terminateGraceMs: number;
}

/** 'interrupted': stopped by SIGTERM without a terminal write (the host converges it). */
/** Sent by the host right before SIGTERM: why the attempt must stop. */
export interface TerminateMessage { type: 'terminate'; reason: 'timeout' | 'shutdown' | 'lost' }

/** 'load_failed': the handler module could not be imported; no terminal write (the host converges it). */
export type TaskOutcomeStatus = 'succeeded' | 'failed' | 'cancelled' | 'attempt_lost' | 'interrupted' | 'load_failed';
export interface TaskResultMessage { type: 'task-result'; taskId: number; status: TaskOutcomeStatus; errorCode?: string; errorMessage?: string }

const logger = createLogger({ name: 'apsup-task-worker' });

/** Set by SIGTERM: the attempt must stop (its ctx.signal is aborted). */
let terminating = false;
/** The host's reason (IPC, before SIGTERM): after 'timeout' or 'lost' a late success is not recorded. */
let terminateReason: TerminateMessage['reason'] | null = null;
let abortCurrent: ((reason: Error) => void) | null = null;

function send(message: TaskResultMessage | { type: 'ready' }): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(message, () => resolve());
  });
}

async function runTask(message: RunTaskMessage): Promise<TaskResultMessage> {
  const { task } = message;
  const target = parseDatabaseUrl(process.env[DATABASE_URL_VARIABLE]);
  const store = openStore(target) as BaseStore;
  // The handler's reads: a connection of its own on which the database refuses writes (ADR T5).
  const read = lazyReadHandle(target.backend, () => openReadHandle(target));
  const tasks = new TaskStore(store);
  const query = (tx: Tx, sql: string, params?: unknown[]) => tx.query(sql, params);
  const hook = (tx: import('../store/types.ts').TxHandle, h: { failureHook?: import('./handler.ts').TaskHandlerModule['failureHook'] }) =>
    withScopedTx(tx, store.backend, (scoped) => h.failureHook?.(scoped, identity, { query, backend: store.backend }));
  const controller = new AbortController();
  abortCurrent = (reason) => controller.abort(reason);
  if (terminating) controller.abort(new Error('the worker is shutting down'));
  let cancelRequested = false;
  const sawCancel = () => {
    if (cancelRequested) return;
    cancelRequested = true;
    // A handler blocked in I/O without control points can react to the cancel through ctx.signal.
    controller.abort(new TaskCancelledError());
  };
  let lost = false;
  const identity: TaskIdentity = {
    taskId: task.taskId, taskType: task.taskType, handlerVersion: task.handlerVersion,
    attemptToken: task.attemptToken, attemptCount: task.attemptCount, payload: task.payload,
    resumedFromTaskId: task.resumedFromTaskId,
  };
  const result = (status: TaskOutcomeStatus, errorCode?: string, errorMessage?: string): TaskResultMessage =>
    ({ type: 'task-result', taskId: task.taskId, status, errorCode, errorMessage });
  const controlPoint = () => {
    if (lost) throw new AttemptLostError('task control point');
    if (cancelRequested) throw new TaskCancelledError();
  };
  const heartbeat = async () => {
    try {
      const hb = await tasks.heartbeat(task.taskId, task.attemptToken, message.leaseMs);
      if (hb.cancelRequested) sawCancel();
    } catch (error) {
      if (error instanceof AttemptLostError) {
        lost = true;
        controller.abort(error);
      }
      throw error;
    }
  };
  const timer = setInterval(() => { heartbeat().catch(() => undefined); }, Math.max(200, Math.floor(message.leaseMs / 3)));
  // Renew at once: loading the registry and the handler module must not run on the claim's lease.
  heartbeat().catch(() => undefined);
  try {
    const registry = await loadTaskRegistry(message.tasksModule);
    let handler;
    try {
      handler = await registry.load(task.taskType, task.handlerVersion);
    } catch (error) {
      if (error instanceof UnknownHandlerError) { // no module, hence no hook: fail closed here
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
      logger: logger.child({ taskId: task.taskId, taskType: task.taskType, attempt: task.attemptCount }),
      signal: controller.signal,
      async heartbeat() {
        await heartbeat();
        controlPoint();
      },
      async progress(current, total, msg) {
        try {
          const p = await tasks.progress(task.taskId, task.attemptToken, { current, total, message: msg }, message.progressMinStep);
          if (p.cancelRequested) sawCancel();
        } catch (error) {
          if (error instanceof AttemptLostError) lost = true;
          throw error;
        }
        controlPoint();
      },
      async commit(fn) {
        return tasks.transaction(async (tx) => {
          await tasks.assertAttempt(tx, task.taskId, task.attemptToken);
          const value = await withScopedTx(tx, store.backend, fn);
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
    };
    try {
      const value = await handler.run(task.payload, ctx);
      if (terminateReason === 'timeout' || terminateReason === 'lost') {
        return result('interrupted', 'interrupted_by_shutdown', `the handler returned after the attempt was stopped (${terminateReason})`);
      }
      await tasks.transaction(async (tx) => {
        if (finalizer) {
          await tasks.assertAttempt(tx, task.taskId, task.attemptToken); // locks the task row first
          await withScopedTx(tx, store.backend, finalizer);
        }
        await tasks.complete(task.taskId, task.attemptToken, value ?? null, tx);
      }).catch((error: unknown) => {
        // A cancel recorded before this success wins (pc_task_complete): end cancelled below.
        if ((error as { code?: unknown }).code === 'cancel_requested') cancelRequested = true;
        throw error;
      });
      return result('succeeded');
    } catch (error) {
      if (error instanceof AttemptLostError || lost) return result('attempt_lost', 'attempt_lost', (error as Error).message);
      // Stopped by SIGTERM: no terminal write here; the host decides (requeue or failure + hook).
      if (terminating && !(error instanceof TaskCancelledError)) return result('interrupted', 'interrupted_by_shutdown', (error as Error).message);
      if (error instanceof TaskCancelledError || cancelRequested) {
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
    if (error instanceof AttemptLostError) return result('attempt_lost', 'attempt_lost', error.message);
    throw error;
  } finally {
    clearInterval(timer);
    abortCurrent = null;
    await read.close();
    await store.close();
  }
}

let running: RunTaskMessage | null = null;

process.on('message', (message: RunTaskMessage | TerminateMessage) => {
  if (message?.type === 'terminate') {
    terminateReason = message.reason;
    return;
  }
  if (message?.type !== 'run-task' || running) return;
  running = message;
  runTask(message).then(
    async (r) => { await send(r); process.exit(0); },
    async (error: unknown) => {
      logger.error({ taskId: message.task.taskId, err: (error as Error).message }, 'task attempt failed unexpectedly');
      await send({ type: 'task-result', taskId: message.task.taskId, status: 'failed', errorCode: 'worker_error', errorMessage: (error as Error).message });
      process.exit(1);
    },
  );
});
process.on('SIGTERM', () => {
  if (terminating) return;
  terminating = true;
  if (!running) process.exit(143); // nothing started yet: nothing to stop
  const current = running;
  abortCurrent?.(new Error('the worker is shutting down'));
  // The host SIGKILLs after its grace period: report before that if the handler has not returned.
  const windowMs = Math.max(0, current.terminateGraceMs - Math.min(500, Math.floor(current.terminateGraceMs / 4)));
  setTimeout(() => {
    void send({ type: 'task-result', taskId: current.task.taskId, status: 'interrupted', errorCode: 'interrupted_by_shutdown', errorMessage: 'the attempt did not stop within the termination grace period' })
      .then(() => process.exit(143));
  }, windowMs);
});
process.on('SIGINT', () => { /* the host decides (see the header) */ });
process.on('disconnect', () => process.exit(0));
void send({ type: 'ready' });
