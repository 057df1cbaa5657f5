/**
 * Task handler SDK. A handler module (loaded lazily, only when a task of its type runs) exports
 * `run(payload, ctx)` and optionally `failureHook(tx, task, ctx)`, which converges the domain rows
 * that still belong to the task inside the terminal transaction (failure, lost attempt, timeout,
 * shutdown without requeue, and cancellation after the handler's own cleanup).
 */
import type { Logger } from '../logging.ts';
import type { ReadHandle } from '../store/read-handle.ts';
import type { Tx } from '../store/scoped-tx.ts';
import type { Backend } from '../store/types.ts';

export type { ReadHandle } from '../store/read-handle.ts';
export type { Tx } from '../store/scoped-tx.ts';

export interface TaskIdentity {
  taskId: number;
  taskType: string;
  handlerVersion: number;
  attemptToken: string;
  attemptCount: number;
  payload: unknown;
  /** Set when this task is an explicit resume of a failed one. */
  resumedFromTaskId?: number | null;
}

export interface TaskContext extends TaskIdentity {
  backend: Backend;
  /** Reads (the database refuses writes: ReadOnlyError); every write goes through commit/onComplete (ADR T5). */
  read: ReadHandle;
  logger: Logger;
  /**
   * Aborted when the task must stop: timeout or graceful shutdown (SIGTERM of the worker; the
   * handler then has TERMINATE_GRACE_SECONDS to return), a lost attempt, or a cancel seen by the
   * background heartbeat (reason: TaskCancelledError).
   */
  signal: AbortSignal;
  /** Extends the lease; a control point: throws TaskCancelledError when a cancel was requested. */
  heartbeat(): Promise<void>;
  /** Progress (numbers throttled, a new message always persisted); also a control point. */
  progress(current: number | null, total?: number | null, message?: string | null): Promise<void>;
  /**
   * One transaction fenced by this attempt: token + unexpired lease checked first (row locked)
   * and again after fn, before commit. `tx` is valid only until fn settles.
   */
  commit<T>(fn: (tx: Tx) => Promise<T> | T): Promise<T>;
  /**
   * Registers the handler's last domain writes: they run inside the transaction that records the
   * task's success (pc_task_complete, fenced by the attempt), so the domain's final state and the
   * task's terminal state commit together or not at all (a loss before it leaves neither).
   */
  onComplete(fn: (tx: Tx) => Promise<void> | void): void;
  /** One parameterized statement on a commit's handle (the same as `tx.query`). */
  query(tx: Tx, sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /**
   * Whether another task is still active (pending or running), read in the commit `tx`
   * (pc_task_is_active): a handler may not read the task table itself.
   */
  taskActive(tx: Tx, taskId: number): Promise<boolean>;
}

export interface TaskHandlerModule {
  run(payload: unknown, ctx: TaskContext): Promise<unknown>;
  failureHook?(tx: Tx, task: TaskIdentity, helpers: { query: TaskContext['query']; backend: Backend }): Promise<void>;
}

/** Thrown at a control point after a cancel was requested; the handler's finally blocks clean up. */
export class TaskCancelledError extends Error {
  constructor() {
    super('task cancelled');
    this.name = 'TaskCancelledError';
  }
}

export function defineTaskHandler(module: TaskHandlerModule): TaskHandlerModule {
  if (!module || typeof module.run !== 'function') throw new Error('a task handler must export run(payload, ctx)');
  return module;
}
