/**
 * The verdict of an attempt whose worker process exited (ADR: timeout/cancel/shutdown, T8, T9):
 * either the child wrote its own terminal state, or the runner ends the attempt with a code.
 * The first reason the runner reached wins: a timeout is a verdict (never requeued, even for
 * idempotent types), a shutdown or a loss lets idempotent types be requeued. The database applies
 * the same order (pc_task_end_attempt: recorded verdict, then cancel, then requeue).
 */
import type { SuccessVerdict } from './success-committer.ts';
import type { TaskResultMessage } from './worker-protocol.ts';

/** Why the runner stopped an attempt (the first one recorded wins). */
export type StopReason = 'timeout' | 'shutdown' | 'lost';

export interface ExitedAttempt {
  stopReason: StopReason | null;
  reported: TaskResultMessage | null;
  /** The runner is shutting down (a child that died meanwhile counts as interrupted). */
  hostStopping: boolean;
  timeoutMs: number;
  /** A 'returned' success: what the runner's commit of it came to (null: not committed). */
  success?: SuccessVerdict | null;
}

/** gone: the task no longer exists; there is nothing to end. */
export type AttemptVerdict = { kind: 'written' } | { kind: 'gone' } | { kind: 'end'; code: string; message: string; requeue: boolean };

export function verdictOf(a: ExitedAttempt): AttemptVerdict {
  const { reported } = a;
  if (a.stopReason === 'timeout') {
    return { kind: 'end', code: 'timeout', message: `the task exceeded its timeout of ${a.timeoutMs} ms`, requeue: false };
  }
  if (a.stopReason === 'lost') {
    return { kind: 'end', code: 'lost', message: 'the attempt stopped heartbeating and its lease expired', requeue: true };
  }
  if (reported?.status === 'returned' && a.success) {
    // The handler returned; the runner's commit decided (pc_task_complete's rules).
    switch (a.success) {
      case 'succeeded':
        return { kind: 'written' };
      case 'task_not_found':
        return { kind: 'gone' };
      case 'cancel_requested': // pc_task_end_attempt ends it cancelled, with its failure hook
        return { kind: 'end', code: 'cancelled', message: 'the cancel was recorded before the success', requeue: false };
      case 'attempt_lost':
        return { kind: 'end', code: 'attempt_lost', message: 'the attempt had lost its lease when its success was committed', requeue: true };
      case 'error':
        return { kind: 'end', code: 'success_not_recorded', message: 'the success could not be committed', requeue: true };
    }
  }
  if (reported?.status === 'returned') {
    return { kind: 'end', code: 'success_not_recorded', message: 'the worker process ended before its success was committed', requeue: true };
  }
  if (reported?.status === 'attempt_lost') {
    // Reported while the lease may still be live (a domain row fenced by the attempt was taken over).
    return { kind: 'end', code: 'attempt_lost', message: reported.errorMessage ?? 'the attempt lost ownership of its domain rows', requeue: true };
  }
  if (reported?.status === 'load_failed') {
    // Never requeued: the same module would fail the same way; the hook runs in the runner.
    return { kind: 'end', code: 'handler_load_failed', message: reported.errorMessage ?? 'the handler module could not be imported', requeue: false };
  }
  if (reported && reported.status !== 'interrupted' && reported.errorCode !== 'worker_error') return { kind: 'written' };
  if (reported?.status === 'interrupted' || a.stopReason === 'shutdown' || a.hostStopping) {
    return { kind: 'end', code: 'interrupted_by_shutdown', message: 'the worker host shut down while the attempt ran', requeue: true };
  }
  if (reported) return { kind: 'end', code: 'worker_error', message: reported.errorMessage ?? 'the worker failed', requeue: true };
  return { kind: 'end', code: 'worker_exited', message: 'the worker process ended without a terminal write', requeue: true };
}
