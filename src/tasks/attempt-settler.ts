/**
 * How a task runner's attempts end (host side): stopping one for a reason (the first reason wins;
 * a timeout or shutdown verdict is recorded in the database while the worker is being stopped),
 * converging one whose worker exited (verdict.ts, convergence.ts), retrying convergences that
 * failed (a failing hook), and the sweep's reconciliation of lost attempts, this runner's own
 * hung children included. ADR: timeout/cancel/shutdown, T8, T9.
 */
import type { Logger } from '../logging.ts';
import type { Clock } from '../runtime/clock.ts';
import type { AttemptProcess } from './attempt-process.ts';
import type { TaskConfig } from './config.ts';
import type { AttemptRef, Converger, Ending } from './convergence.ts';
import type { RunnerStats } from './runner-stats.ts';
import type { ClaimedTask, TaskStore } from './task-store.ts';
import { verdictOf, type StopReason } from './verdict.ts';

export interface SettlerDeps {
  tasks: TaskStore;
  converger: Converger;
  config: TaskConfig;
  stats: RunnerStats;
  logger: Logger;
  clock: Clock;
  /** The runner's attempts by task id (read only here). */
  running: ReadonlyMap<number, AttemptProcess>;
  /** Registers database work stop() waits for. */
  track: <T>(p: Promise<T>) => Promise<T>;
  /** The task types this runner's registry knows. */
  taskTypes: () => readonly string[];
}

export class AttemptSettler {
  /** Attempts whose worker is gone but whose convergence must be retried (a failing hook). */
  private readonly unsettled = new Map<number, { ref: AttemptRef; ending: Ending }>();
  /** Verdicts being recorded, per task (awaited before the attempt is converged). */
  private readonly verdicts = new Map<number, Promise<unknown>>();
  /** Launch time (clock.monotonic()) per running task, for attempt durations. */
  private readonly launchedAt = new Map<number, number>();

  constructor(private readonly d: SettlerDeps) {}

  launched(taskId: number): void {
    this.launchedAt.set(taskId, this.d.clock.monotonic());
  }

  forget(taskId: number): void {
    this.launchedAt.delete(taskId);
  }

  timeoutOf(task: ClaimedTask): number {
    return Math.min(task.timeoutMs, this.d.config.maxTimeoutMs);
  }

  /**
   * Stops an attempt for a reason; the first reason wins. A timeout or shutdown verdict is
   * recorded in the database while the worker is being stopped (not before: a worker holding its
   * task row in a transaction must not delay the kill), so it survives the lease expiring during
   * the grace period and a sweep of any runner honours it.
   */
  stop(attempt: AttemptProcess, reason: StopReason): Promise<void> {
    const { task } = attempt;
    // Ended before the stop, or returned with its success being committed: nothing to stop.
    if (attempt.finishedClean || attempt.success) return Promise.resolve();
    if (!attempt.stopReason && reason !== 'lost' && attempt.alive) {
      const verdict = reason === 'timeout' ? 'timeout' : 'interrupted_by_shutdown';
      this.verdicts.set(
        task.taskId,
        this.d.track(
          this.d.tasks.recordVerdict(task.taskId, task.attemptToken, verdict).catch((error: unknown) => {
            this.d.logger.warn(
              { taskId: task.taskId, verdict, err: (error as Error).message },
              'recording the task verdict failed; the attempt is ended with it when its worker exited',
            );
          }),
        ),
      );
    }
    attempt.stopReason ??= reason;
    return attempt.terminate(reason);
  }

  /** Converges an attempt whose worker exited; true when its terminal state is written (by the child or the success commit). */
  async settle(attempt: AttemptProcess, hostStopping: boolean): Promise<boolean> {
    const { task } = attempt;
    await this.verdicts.get(task.taskId);
    this.verdicts.delete(task.taskId);
    const success = await attempt.success;
    const v = verdictOf({ stopReason: attempt.stopReason, reported: attempt.reported, hostStopping, timeoutMs: this.timeoutOf(task), success });
    if (v.kind === 'gone') {
      this.d.logger.warn({ taskId: task.taskId, taskType: task.taskType }, 'the task of a returned attempt no longer exists');
      return false;
    }
    if (v.kind === 'written') {
      const status = success === 'succeeded' ? 'succeeded' : attempt.reported?.status;
      this.d.stats.endedAs(
        task.taskType,
        status === 'succeeded' || status === 'cancelled' ? status : 'failed',
        attempt.reported?.errorCode ?? null,
        this.duration(task.taskId),
      );
      this.d.logger.info({ taskId: task.taskId, taskType: task.taskType, status, errorCode: attempt.reported?.errorCode }, 'task attempt ended');
      return true;
    }
    const ref = { taskId: task.taskId, taskType: task.taskType, handlerVersion: task.handlerVersion, attemptToken: task.attemptToken };
    await this.settleEnding(task.taskId, ref, {
      path: 'exited',
      code: v.code,
      message: v.message,
      requeue: v.requeue,
      payload: task.payload,
      attemptCount: task.attemptCount,
    });
    return false;
  }

  /** The sweep's part: retries this runner's failed convergences, then reconciles lost attempts. */
  async reconcile(): Promise<void> {
    const { tasks, stats, logger } = this.d;
    for (const [taskId, u] of [...this.unsettled]) await this.settleEnding(taskId, u.ref, u.ending);
    try {
      for (const lost of await tasks.listLost(100, this.d.taskTypes())) {
        const mine = this.d.running.get(lost.taskId);
        if (mine) {
          // This runner's own child stopped heartbeating (a blocked event loop, a hang): its
          // attempt is lost. Terminate it; settle() converges it once it exited.
          // (A success being committed is not stopped: the commit finds the lease lost.)
          if (mine.task.attemptToken === lost.attemptToken && !mine.stopReason && !mine.success) {
            logger.warn(
              { taskId: lost.taskId, taskType: lost.taskType, pid: mine.child.pid },
              'task worker stopped heartbeating and its lease expired; terminating it',
            );
            void this.stop(mine, 'lost');
          }
          continue;
        }
        if (this.unsettled.has(lost.taskId)) continue;
        const r = await this.d.converger.converge(lost, {
          path: 'expired',
          code: 'lost',
          message: 'the attempt stopped heartbeating and its lease expired',
          requeue: true,
        });
        if (r.result === 'converged') stats.endedAs(lost.taskType, r.outcome, 'lost', -1);
      }
      stats.lastSweepOkAt = this.d.clock.now();
    } catch (error) {
      stats.sweepFailures += 1;
      logger.warn({ err: (error as Error).message }, 'lost-task reconciliation failed');
    }
  }

  private async settleEnding(taskId: number, ref: AttemptRef, ending: Ending): Promise<void> {
    const r = await this.d.converger.converge(ref, ending);
    if (r.result === 'retry') this.unsettled.set(taskId, { ref, ending });
    else this.unsettled.delete(taskId);
    if (r.result === 'converged') this.d.stats.endedAs(ref.taskType, r.outcome, ending.code, this.duration(taskId));
  }

  private duration(taskId: number): number {
    const at = this.launchedAt.get(taskId);
    this.launchedAt.delete(taskId);
    return at === undefined ? -1 : Math.round(this.d.clock.monotonic() - at);
  }
}
