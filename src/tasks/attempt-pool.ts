/**
 * Warm task worker processes (task-worker-main.ts): started ahead of need, never more than the
 * runner's capacity alive at once, and reused for the next attempt only after an attempt that
 * ended cleanly (the child wrote the terminal state and reported itself reusable). A process
 * whose attempt was stopped (timeout, shutdown, lost lease), that crashed or failed to load its
 * handler is never given another attempt: it is terminated and a fresh one takes its place.
 * A process also retires after WORKER_MAX_ATTEMPTS attempts (bounds what a handler's own module
 * state can accumulate; with MODULE_ISOLATION=attempt, module instances are never freed).
 *
 * The runner claims only as many tasks as there are ready idle processes (`readyIdle`) and asks
 * for the rest to be started (`want`): a claim never waits for a process start-up, so its lease
 * and its share of the cap are not spent on one, and another runner with a ready process may take
 * the task meanwhile. Each process that becomes ready calls `onReady` (the runner claims again).
 * A process that exits before it is ready is started again only after a back-off (1 s doubling,
 * at most 30 s), so a worker that cannot start does not become a fork loop.
 */
import type { ChildProcess } from 'node:child_process';
import { childBaseEnv, childDatabaseOf, childEnvOf, type ChildDatabase } from '../runtime/child-database.ts';
import { forkManagedChild, isAlive, terminateChild, type ManagedChild } from '../child/managed-child.ts';
import { needsTsLoader, PRELOAD_TS_VARIABLE, USER_MODULES_VARIABLE } from '../child/ts-loader.ts';
import { useForHost } from '../child/host-import.ts';
import { compileUserModules } from '../child/user-modules.ts';
import type { Logger } from '../logging.ts';
import { systemClock, type Clock, type ClockTimer } from '../runtime/clock.ts';
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

const START_RETRY_FIRST_MS = 1000;
const START_RETRY_MAX_MS = 30_000;

export class AttemptPool {
  private readonly idle: TaskWorker[] = [];
  private readonly all = new Set<TaskWorker>();
  private closed = false;
  /** Consecutive processes that exited before they were ready, and when the next may start. */
  private startFailures = 0;
  private startBlockedUntil = -Infinity;
  private startRetryTimer: ClockTimer | null = null;
  /** Processes started / attempts given to an already used process (metrics, tests). */
  spawned = 0;
  reused = 0;

  constructor(
    private readonly config: TaskConfig,
    databaseUrl: string | ChildDatabase,
    private readonly logger: Logger,
    private readonly onReady: () => void = () => undefined,
    private readonly clock: Clock = systemClock,
  ) {
    this.database = childDatabaseOf(databaseUrl);
  }

  private readonly database: ChildDatabase;

  get size(): number {
    return this.all.size;
  }

  /** Manifest of the user modules compiled for the processes (user-modules.ts), if any. */
  private userModules: string | null = null;

  /** Compiles the tasks module and its handlers before processes start (the processes then need no tsx). */
  async prepare(entries: string[]): Promise<void> {
    const r = await compileUserModules(entries);
    this.userModules = 'manifest' in r ? r.manifest : null;
    // The host's own imports of these modules (failure hooks it runs) use the same JavaScript.
    if (this.userModules) useForHost(this.userModules);
    if ('reason' in r && needsTsLoader(this.config.tasksModule)) {
      this.logger.info({ reason: r.reason }, 'task worker processes load their TypeScript modules through tsx');
    }
  }

  get idleCount(): number {
    return this.idle.length;
  }

  private spawn(): TaskWorker {
    const handle = forkManagedChild('task-worker-main', {
      ...childBaseEnv(process.env),
      ...childEnvOf(this.database),
      [PRELOAD_TS_VARIABLE]: needsTsLoader(this.config.tasksModule) && !this.userModules ? '1' : '0',
      [USER_MODULES_VARIABLE]: this.userModules ?? '',
      [PRELOAD_TASKS_MODULE_VARIABLE]: this.config.tasksModule,
      [MODULE_ISOLATION_VARIABLE]: this.config.moduleIsolation,
    });
    this.database.watchdog?.watch(handle.child);
    const worker = new TaskWorker(handle);
    this.spawned += 1;
    this.all.add(worker);
    void worker.ready.then((ready) => {
      if (!ready) return;
      this.startFailures = 0;
      if (!this.closed) this.onReady();
    });
    void worker.exited.then(() => {
      this.all.delete(worker);
      const i = this.idle.indexOf(worker);
      if (i >= 0) this.idle.splice(i, 1);
      if (!worker.isReady && !worker.retiring) this.startFailed(worker);
      // An idle process that died is replaced; one that never became ready only after the back-off.
      else if (i >= 0) this.prewarm();
    });
    return worker;
  }

  private startFailed(worker: TaskWorker): void {
    if (this.closed) return;
    this.startFailures += 1;
    const delay = Math.min(START_RETRY_MAX_MS, START_RETRY_FIRST_MS * 2 ** (this.startFailures - 1));
    this.startBlockedUntil = this.clock.monotonic() + delay;
    this.logger.warn(
      { pid: worker.pid, exitCode: worker.child.exitCode, signal: worker.child.signalCode, failures: this.startFailures, retryMs: delay },
      'task worker exited before it was ready; starting another after a back-off',
    );
    this.startRetryTimer?.cancel();
    this.startRetryTimer = this.clock.setTimeout(() => {
      this.startRetryTimer = null;
      if (!this.closed) this.onReady(); // the runner claims again, which asks for processes
    }, delay);
  }

  private canStart(): boolean {
    return !this.closed && this.all.size < this.config.capacity && this.clock.monotonic() >= this.startBlockedUntil;
  }

  /** Processes alive that finished their start-up (idle or busy). */
  readyCount(): number {
    let n = 0;
    for (const w of this.all) if (w.isReady && w.alive) n += 1;
    return n;
  }

  /** Idle processes that can take an attempt, ready or still starting. */
  private usableIdle(): TaskWorker[] {
    return this.idle.filter((w) => w.alive && !w.retiring);
  }

  /** Ready idle processes: how many tasks the runner may claim now. */
  readyIdle(): number {
    return this.usableIdle().filter((w) => w.isReady).length;
  }

  /**
   * Starts processes (side by side) until `count` are idle, ready or starting, within the
   * capacity; at most WARM_WORKERS (at least one) idle at once, so a host configured to keep few
   * processes is not handed a crowd for one task.
   */
  want(count: number): void {
    count = Math.min(count, Math.max(1, this.config.warmWorkers));
    let available = this.usableIdle().length;
    while (available < count && this.canStart()) {
      this.idle.push(this.spawn());
      available += 1;
    }
  }

  /**
   * Starts processes until `capacity` are alive (idle or busy), one at a time: the next starts
   * once the previous is ready, so the first attempt does not wait for a crowd of start-ups (an
   * attempt that finds no idle process starts one of its own at once).
   */
  prewarm(): void {
    if (!this.canStart() || this.usableIdle().length >= this.config.warmWorkers) return;
    if (this.idle.some((w) => !w.isReady && w.alive)) return;
    const worker = this.spawn();
    this.idle.push(worker);
    void worker.ready.then((ready) => {
      if (ready) this.prewarm();
    });
  }

  /**
   * A process for an attempt: a ready idle one (the runner claimed for one), else a starting one,
   * else a new one (a ready process died between the claim and now: the attempt waits for its
   * replacement, its lease kept by AttemptProcess).
   */
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
    return terminateChild(worker.handle, this.config.terminateGraceMs, {
      clock: this.clock,
      beforeKill: () => {
        this.logger.warn({ pid: worker.pid, graceMs: this.config.terminateGraceMs }, 'task worker did not exit within the grace period; killing it');
      },
    });
  }

  /** Stops the idle processes (busy ones are stopped with their attempts); resolves when they exited. */
  async close(): Promise<void> {
    this.closed = true;
    this.startRetryTimer?.cancel();
    await Promise.all([...this.idle].map((w) => this.retire(w)));
  }

  /** Every process still alive (tests). */
  pids(): number[] {
    return [...this.all].map((w) => w.pid);
  }
}
