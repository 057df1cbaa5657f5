/**
 * Warm task worker processes (task-worker-main.ts): started ahead of need, never more than the
 * runner's capacity alive at once, and reused for the next attempt only after an attempt that
 * ended cleanly (the child wrote the terminal state and reported itself reusable). A process
 * whose attempt was stopped (timeout, shutdown, lost lease), that crashed or failed to load its
 * handler is never given another attempt: it is terminated and a fresh one takes its place.
 * A process also retires after WORKER_MAX_ATTEMPTS attempts (bounds what a handler's own module
 * state can accumulate; with MODULE_ISOLATION=attempt, module instances are never freed).
 */
import type { ChildProcess } from 'node:child_process';
import { forkManagedChild, isAlive, terminateChild, type ManagedChild } from '../child/managed-child.ts';
import { needsTsLoader, PRELOAD_TS_VARIABLE } from '../child/ts-loader.ts';
import type { Logger } from '../logging.ts';
import type { TaskConfig } from './config.ts';
import { MODULE_ISOLATION_VARIABLE, PRELOAD_TASKS_MODULE_VARIABLE, type TaskWorkerMessage } from './worker-protocol.ts';

export class TaskWorker {
  readonly child: ChildProcess;
  readonly exited: Promise<unknown>;
  /** Resolves true once the process sent 'ready', false if it exited before. */
  readonly ready: Promise<boolean>;
  isReady = false;
  /** Attempts handed to this process so far. */
  attempts = 0;
  retiring = false;

  constructor(readonly handle: ManagedChild) {
    this.child = handle.child;
    this.exited = handle.exited;
    this.ready = new Promise<boolean>((resolve) => {
      const onMessage = (m: TaskWorkerMessage) => {
        if (m?.type !== 'ready') return;
        this.child.off('message', onMessage);
        this.isReady = true;
        resolve(true);
      };
      this.child.on('message', onMessage);
      void handle.exited.then(() => resolve(false));
    });
  }

  get alive(): boolean {
    return isAlive(this.child);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }
}

export class AttemptPool {
  private readonly idle: TaskWorker[] = [];
  private readonly all = new Set<TaskWorker>();
  private closed = false;
  /** Processes started / attempts given to an already used process (metrics, tests). */
  spawned = 0;
  reused = 0;

  constructor(
    private readonly config: TaskConfig,
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.all.size;
  }

  get idleCount(): number {
    return this.idle.length;
  }

  private spawn(): TaskWorker {
    const handle = forkManagedChild('task-worker-main', {
      ...process.env,
      POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: this.databaseUrl,
      [PRELOAD_TS_VARIABLE]: needsTsLoader(this.config.tasksModule) ? '1' : '0',
      [PRELOAD_TASKS_MODULE_VARIABLE]: this.config.tasksModule,
      [MODULE_ISOLATION_VARIABLE]: this.config.moduleIsolation,
    });
    const worker = new TaskWorker(handle);
    this.spawned += 1;
    this.all.add(worker);
    void worker.exited.then(() => {
      this.all.delete(worker);
      const i = this.idle.indexOf(worker);
      if (i >= 0) this.idle.splice(i, 1);
      // An idle process that died is replaced; one that never became ready is not (no respawn loop).
      if (i >= 0 && worker.isReady) this.prewarm();
    });
    return worker;
  }

  /**
   * Starts processes until `capacity` are alive (idle or busy), one at a time: the next starts
   * once the previous is ready, so the first attempt does not wait for a crowd of start-ups (an
   * attempt that finds no idle process starts one of its own at once).
   */
  prewarm(): void {
    if (this.closed || this.all.size >= this.config.capacity) return;
    if (this.idle.some((w) => !w.isReady && w.alive)) return;
    const worker = this.spawn();
    this.idle.push(worker);
    void worker.ready.then((ready) => {
      if (ready) this.prewarm();
    });
  }

  /** A process for an attempt: a ready idle one first, else a starting one, else a new one. */
  take(): TaskWorker {
    if (this.closed) throw new Error('the task worker pool is closed');
    let pick = -1;
    for (let i = this.idle.length - 1; i >= 0; i -= 1) {
      const w = this.idle[i]!;
      if (!w.alive || w.retiring) continue;
      if (w.isReady) {
        pick = i;
        break;
      }
      if (pick < 0) pick = i;
    }
    const worker = pick >= 0 ? this.idle.splice(pick, 1)[0]! : this.spawn();
    if (worker.attempts > 0) this.reused += 1;
    worker.attempts += 1;
    return worker;
  }

  /**
   * Hands a process back after its attempt. Reused only when its attempt ended cleanly and it is
   * alive and connected; otherwise terminated (the caller already did so for a stopped attempt).
   */
  release(worker: TaskWorker, reusable: boolean): void {
    const keep =
      reusable &&
      !this.closed &&
      worker.alive &&
      worker.child.connected &&
      !worker.retiring &&
      worker.attempts < this.config.workerMaxAttempts &&
      this.all.size <= this.config.capacity;
    if (keep) this.idle.push(worker);
    else void this.retire(worker);
    this.prewarm();
  }

  /** Terminates a process (SIGTERM, grace, SIGKILL); resolves on its confirmed exit. */
  retire(worker: TaskWorker): Promise<boolean> {
    worker.retiring = true;
    const i = this.idle.indexOf(worker);
    if (i >= 0) this.idle.splice(i, 1);
    return terminateChild(worker.handle, this.config.terminateGraceMs, () => {
      this.logger.warn({ pid: worker.pid, graceMs: this.config.terminateGraceMs }, 'task worker did not exit within the grace period; killing it');
    });
  }

  /** Stops the idle processes (busy ones are stopped with their attempts); resolves when they exited. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.idle].map((w) => this.retire(w)));
  }

  /** Every process still alive (tests). */
  pids(): number[] {
    return [...this.all].map((w) => w.pid);
  }
}
