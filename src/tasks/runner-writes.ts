/**
 * The task runner's writes of one task outside its group commit: a success alone (the fallback of
 * a batch that failed whole), a claim given back unstarted, and the fail-closed end of a task
 * whose handler version this registry does not have.
 */
import type { Logger } from '../logging.ts';
import { AttemptLostError } from '../store/errors.ts';
import type { TaskConfig } from './config.ts';
import { UnknownHandlerError } from './registry.ts';
import type { ClaimedTask, SuccessItem, SuccessOutcome, TaskStore } from './task-store.ts';

/** One success alone (pc_task_succeed), when its group commit failed whole: its refusal as an outcome. */
export async function commitOneSuccess(tasks: TaskStore, item: SuccessItem): Promise<SuccessOutcome> {
  try {
    await tasks.succeed(item.taskId, item.attemptToken, item.resultJson === null ? null : JSON.parse(item.resultJson));
    return 'succeeded';
  } catch (error) {
    if (error instanceof AttemptLostError) return 'attempt_lost';
    const code = (error as { code?: unknown }).code;
    if (code === 'cancel_requested' || code === 'task_not_found') return code;
    throw error;
  }
}

/** A task claimed while the runner began to stop, never started: back to pending, whatever its type. */
export async function giveBackClaim(tasks: TaskStore, config: TaskConfig, logger: Logger, task: ClaimedTask): Promise<void> {
  const message = 'the worker host stopped before the attempt started';
  try {
    // maxAttempts + 1: an attempt that never ran does not use up the task's last attempt.
    const opts = { requeue: true, maxAttempts: config.maxAttempts + 1, errorCode: 'interrupted_by_shutdown', errorMessage: message, workerExited: true };
    await tasks.transaction((tx) => tasks.endAttempt(task.taskId, task.attemptToken, opts, tx));
  } catch (error) {
    logger.warn({ taskId: task.taskId, err: (error as Error).message }, 'giving back a task claimed during the stop failed; its lease expires');
  }
}

/** Ends a claimed task whose type or version the registry lacks (before any process is taken). */
export async function failClosed(tasks: TaskStore, logger: Logger, task: ClaimedTask, error: unknown): Promise<void> {
  const code = error instanceof UnknownHandlerError ? error.code : 'handler_unavailable';
  try {
    await tasks.transaction((tx) => tasks.fail(task.taskId, task.attemptToken, code, (error as Error).message, tx));
    logger.warn({ taskId: task.taskId, taskType: task.taskType, handlerVersion: task.handlerVersion, errorCode: code }, 'task failed closed');
  } catch (e) {
    logger.warn({ taskId: task.taskId, err: (e as Error).message }, 'failing an unknown task failed');
  }
}
