/** Messages between the task runner (host) and a task worker process (task-worker-main.ts). */
import type { TransactionMessage } from '../store/transaction-observer.ts';
import type { ClaimedTask } from './task-store.ts';

/** The tasks module, imported once before 'ready' (its dependencies and the loader warm). */
export const PRELOAD_TASKS_MODULE_VARIABLE = 'APSUP_TASK_WORKER_TASKS_MODULE';
/** DURABLE_TASK_MODULE_ISOLATION of the host: 'process' or 'attempt' (handler-modules.ts). */
export const MODULE_ISOLATION_VARIABLE = 'APSUP_TASK_WORKER_MODULE_ISOLATION';

export interface RunTaskMessage {
  type: 'run-task';
  task: ClaimedTask;
  tasksModule: string;
  leaseMs: number;
  progressMinStep: number;
  /** The host's TERMINATE_GRACE_SECONDS in ms: how long a SIGTERM'd attempt may take to stop. */
  terminateGraceMs: number;
}

/** Sent by the host right before SIGTERM: why the attempt must stop. */
export interface TerminateMessage {
  type: 'terminate';
  reason: 'timeout' | 'shutdown' | 'lost';
}

/**
 * 'interrupted': stopped by SIGTERM without a terminal write (the host converges it).
 * 'load_failed': the handler module could not be imported; no terminal write (the host converges it).
 * 'returned': the handler returned without ctx.onComplete writes; the host commits the success
 *   (its group commit, pc_task_succeed_batch); resultJson holds its result.
 */
export type TaskOutcomeStatus = 'succeeded' | 'failed' | 'cancelled' | 'attempt_lost' | 'interrupted' | 'load_failed' | 'returned';
export interface TaskResultMessage {
  type: 'task-result';
  taskId: number;
  status: TaskOutcomeStatus;
  errorCode?: string;
  errorMessage?: string;
  /** 'returned': the handler's result as JSON text. */
  resultJson?: string;
  /**
   * Sent once the attempt's connections are closed: the process left nothing running (no timer,
   * socket or child process beyond those it had before the attempt) and may take another attempt.
   */
  reusable?: boolean;
}

export interface ReadyMessage {
  type: 'ready';
  pid: number;
}

/** Host → worker. */
export type TaskHostMessage = RunTaskMessage | TerminateMessage;
/** Worker → host. */
export type TaskWorkerMessage = TaskResultMessage | ReadyMessage | TransactionMessage;
