/**
 * Supervision of one attempt in a task worker process from the pool (attempt-pool.ts): hand-over
 * (a process still starting gets the attempt once ready, the claim's lease kept alive by the
 * runner meanwhile, since its start-up must not eat the lease; a lost attempt is never handed
 * over), the result over IPC, and termination (the reason first over IPC, then SIGTERM, bounded
 * grace, SIGKILL). It decides nothing about the task's state.
 *
 * The attempt is over when the process reported a clean end and may be reused, or else when the
 * process exited: a stopped or failed process holds its capacity slot until its exit is confirmed.
 */
import type { ChildProcess } from 'node:child_process';
import { terminateChild } from '../child/managed-child.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';
import type { Logger } from '../logging.ts';
import { AttemptLostError } from '../store/errors.ts';
import type { TaskWorker } from './attempt-pool.ts';
import type { TaskConfig } from './config.ts';
import type { ClaimedTask, TaskStore } from './task-store.ts';
import type { SuccessVerdict } from './success-committer.ts';
import type { StopReason } from './verdict.ts';
import type { RunTaskMessage, TaskResultMessage, TaskWorkerMessage, TerminateMessage } from './worker-protocol.ts';

/** Resolves once the IPC channel is closed (every message it carried was emitted), at most 1 s after the call. */
function channelClosed(child: ChildProcess): Promise<void> {
  if (!child.connected) return Promise.resolve();
  return new Promise((resolve) => {
    const bound = setTimeout(resolve, 1000);
    child.once('disconnect', () => {
      clearTimeout(bound);
      resolve();
    });
  });
}

export class AttemptProcess {
  readonly child: ChildProcess;
  /** Resolves when the attempt is over (see the header). */
  readonly ended: Promise<void>;
  reported: TaskResultMessage | null = null;
  /** The first reason the runner stopped it for. */
  stopReason: StopReason | null = null;
  /** A clean end was reported before any stop: the process goes back to the pool. */
  finishedClean = false;
  /** The runner's commit of a 'returned' success, once it started. */
  success: Promise<SuccessVerdict> | null = null;
  /** What that commit came to, once it did. */
  successVerdict: SuccessVerdict | null = null;
  /** Called when the worker reports 'returned' (the runner commits the success). */
  onReturned: ((m: TaskResultMessage) => void) | null = null;
  private endNow: () => void = () => undefined;
  private handedOver = false;
  private readonly keeper: NodeJS.Timeout | null = null;

  constructor(
    readonly task: ClaimedTask,
    readonly worker: TaskWorker,
    private readonly tasks: TaskStore,
    private readonly config: TaskConfig,
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
  ) {
    this.child = worker.child;
    // Its last messages (a 'returned' success sent right before exiting) may still be in the
    // channel when the exit is seen: the attempt is over once the channel closed too. The exit
    // is watched as an event, removed when the attempt ends: a reused process outlives thousands
    // of attempts, and a reaction on its `exited` promise would keep every one of them.
    const onExit = () => void channelClosed(this.child).then(() => this.endNow());
    this.ended = new Promise<void>((resolve) => {
      this.endNow = resolve;
    });
    const onMessage = (m: TaskWorkerMessage) => {
      if (m?.type !== 'task-result' || m.taskId !== task.taskId || this.reported) return;
      this.reported = m;
      if (m.status === 'returned') this.onReturned?.(m);
      else if (m.reusable === true) this.finishClean();
    };
    this.child.on('message', onMessage);
    if (this.alive) this.child.once('exit', onExit);
    else onExit();
    void this.ended.then(() => {
      this.child.off('message', onMessage);
      this.child.off('exit', onExit);
      if (this.keeper) clearInterval(this.keeper);
    });
    if (worker.isReady) {
      // Ready at claim time: the lease was just granted, the child renews it at once.
      this.send();
    } else {
      this.keeper = setInterval(
        () => {
          if (!this.handedOver) void this.keepLease();
        },
        Math.max(200, Math.floor(config.leaseMs / 3)),
      );
      void worker.ready.then((ready) => {
        if (!ready) return;
        void this.keepLease().then((ok) => {
          if (ok) this.send();
        });
      });
    }
  }

  /** The attempt is over and its process reusable (a clean end before any stop); false if not. */
  finishClean(): boolean {
    if (this.stopReason !== null || !this.alive) return false;
    this.finishedClean = true;
    this.endNow();
    return true;
  }

  /** Terminates the process without a stop reason (its attempt is over; it is not reused). */
  retire(): Promise<boolean> {
    return terminateChild(this.worker.handle, this.config.terminateGraceMs, { clock: this.clock });
  }

  /** How the attempt ended, as far as this process and the runner's commit of its success tell. */
  get status(): string | null {
    const reported = this.reported?.status;
    if (reported === 'returned' && this.successVerdict) return this.successVerdict;
    return reported ?? this.stopReason;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  private send(): void {
    if (this.handedOver || !this.child.connected || this.stopReason) return;
    this.handedOver = true;
    if (this.keeper) clearInterval(this.keeper);
    const message: RunTaskMessage = {
      type: 'run-task',
      task: this.task,
      tasksModule: this.config.tasksModule,
      leaseMs: this.config.leaseMs,
      progressMinStep: this.config.progressMinStep,
      terminateGraceMs: this.config.terminateGraceMs,
    };
    this.child.send(message); // from here on the child heartbeats (at once, then every lease / 3)
  }

  /** Until the child has the attempt, the runner renews the lease; a lost attempt is never handed over. */
  private async keepLease(): Promise<boolean> {
    try {
      await this.tasks.heartbeat(this.task.taskId, this.task.attemptToken, this.config.leaseMs);
    } catch (error) {
      if (error instanceof AttemptLostError) {
        if (!this.reported) {
          this.logger.warn({ taskId: this.task.taskId, err: error.message }, 'task attempt lost before its worker started');
          this.reported = { type: 'task-result', taskId: this.task.taskId, status: 'attempt_lost', errorCode: 'attempt_lost', errorMessage: error.message };
          this.child.kill('SIGKILL');
        }
        return false;
      }
      this.logger.warn({ taskId: this.task.taskId, err: (error as Error).message }, 'task lease renewal during worker start-up failed');
    }
    return true;
  }

  /**
   * SIGTERM, bounded wait, SIGKILL; resolves once the process is gone. The reason goes first over
   * IPC: after a timeout or a lost lease a handler that returns in the grace period must not
   * record a success; after a shutdown it may (it finished its work). An attempt that already
   * ended cleanly is not stopped: its process belongs to the pool again.
   */
  async terminate(reason: StopReason): Promise<void> {
    if (this.finishedClean) return;
    this.stopReason ??= reason;
    if (!this.alive) return this.ended;
    if (this.child.connected) {
      const message: TerminateMessage = { type: 'terminate', reason };
      await new Promise<void>((resolve) => this.child.send(message, () => resolve()));
    }
    await terminateChild(this.worker.handle, this.config.terminateGraceMs, { clock: this.clock });
  }
}
