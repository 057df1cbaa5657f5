/**
 * Supervision of one attempt's worker child process: fork, the claim's lease kept alive until the
 * child has the attempt (its start-up must not eat the lease), IPC, and termination (the reason
 * first over IPC, SIGTERM, bounded grace, SIGKILL). It decides nothing about the task's state.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Logger } from '../logging.ts';
import { SRC_DIR } from '../paths.ts';
import { AttemptLostError } from '../store/errors.ts';
import type { TaskConfig } from './config.ts';
import type { ClaimedTask, TaskStore } from './task-store.ts';
import type { RunTaskMessage, TaskResultMessage, TerminateMessage } from './task-worker-main.ts';
import type { StopReason } from './verdict.ts';

const TASK_WORKER_MAIN = path.join(SRC_DIR, 'tasks', 'task-worker-main.ts');
const TSX_LOADER = import.meta.resolve('tsx');

export class AttemptProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  reported: TaskResultMessage | null = null;
  /** The first reason the runner stopped it for. */
  stopReason: StopReason | null = null;
  private handedOver = false;
  private readonly keeper: NodeJS.Timeout;

  constructor(readonly task: ClaimedTask, private readonly tasks: TaskStore, private readonly config: TaskConfig, databaseUrl: string, private readonly logger: Logger) {
    this.child = fork(TASK_WORKER_MAIN, [], {
      execArgv: ['--import', TSX_LOADER],
      env: { ...process.env, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'json',
    });
    this.exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.keeper = setInterval(() => { if (!this.handedOver) void this.keepLease(); }, Math.max(200, Math.floor(config.leaseMs / 3)));
    void this.exited.then(() => clearInterval(this.keeper));
    this.child.on('message', (m: TaskResultMessage | { type: 'ready' }) => {
      if (m.type === 'ready') this.handOver();
      else if (m.type === 'task-result') this.reported = m;
    });
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  private handOver(): void {
    const message: RunTaskMessage = {
      type: 'run-task', task: this.task, tasksModule: this.config.tasksModule, leaseMs: this.config.leaseMs,
      progressMinStep: this.config.progressMinStep, terminateGraceMs: this.config.terminateGraceMs,
    };
    void this.keepLease().then((ok) => {
      if (!ok || this.handedOver || !this.child.connected || this.stopReason) return;
      this.handedOver = true;
      clearInterval(this.keeper);
      this.child.send(message); // from here on the child heartbeats (at once, then every lease / 3)
    });
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
   * record a success; after a shutdown it may (it finished its work).
   */
  async terminate(reason: StopReason): Promise<void> {
    this.stopReason ??= reason;
    if (!this.alive) return this.exited;
    if (this.child.connected) {
      const message: TerminateMessage = { type: 'terminate', reason };
      await new Promise<void>((resolve) => this.child.send(message, () => resolve()));
    }
    this.child.kill('SIGTERM');
    const graceful = await Promise.race([
      this.exited.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), this.config.terminateGraceMs).unref()),
    ]);
    if (!graceful) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}
