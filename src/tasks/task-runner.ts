/**
 * Durable task runner (host side). Claims pending tasks up to the capacity cap (the database
 * enforces it across processes), runs each attempt in a warm task worker process from its pool
 * (attempt-pool.ts; reused only after a clean end), enforces the timeout, and ends attempts that
 * stop without a terminal write with the verdict it reached (verdict.ts, convergence.ts): a
 * timeout or shutdown verdict is recorded before the worker is stopped, so it is the one recorded
 * whatever the lease did meanwhile (ADR: timeout/cancel/shutdown; a timeout is never retried).
 *
 * Wake-ups: a submission is runnable at commit. In-process submissions notify after their commit
 * (TaskService); other processes' commits reach it through pending-probe.ts. A lost wake-up only
 * delays the task: work is also picked up at start-up, when a task finishes (relay), and by a
 * bounded periodic sweep that also reconciles lost attempts (this runner's hung children
 * included) and retries its failed convergences. A short-TTL readiness fact is kept while it runs.
 */
import type { ChildDatabase } from '../runtime/child-database.ts';
import { faultPoint } from '../devtools/fault.ts';
import type { Logger } from '../logging.ts';
import { AttemptPool } from './attempt-pool.ts';
import type { AttemptProcess } from './attempt-process.ts';
import { launchAttempt, type LaunchContext } from './attempt-launch.ts';
import { AttemptSettler } from './attempt-settler.ts';
import type { TaskConfig } from './config.ts';
import { Converger } from './convergence.ts';
import { PendingProbe, type WakeupSource } from './pending-probe.ts';
import type { NotifyChannel } from '../notify/channel.ts';
import { subscribeTaskRunner } from '../notify/hooks.ts';
import { ReadinessPublisher } from './readiness-publisher.ts';
import { RunnerStats } from './runner-stats.ts';
import type { TaskRegistry } from './registry.ts';
import { commitOneSuccess } from './runner-writes.ts';
import { SuccessClaims } from './success-claims.ts';
import { SuccessCommitter } from './success-committer.ts';
import { MAX_CLAIM_BATCH, type ClaimedTask, type SuccessItem, type TaskStore } from './task-store.ts';
import { setLongTimeout, settleWithin } from './timers.ts';
import { systemClock, type Clock, type ClockTimer } from '../runtime/clock.ts';
import { newTaskWorkerId } from './worker-id.ts';

export { setLongTimeout };

export type { WakeupSource };

export class TaskRunner {
  readonly workerId: string;
  private readonly running = new Map<number, AttemptProcess>();
  /** Database work in flight (sweeps, convergences, claims): stop() waits for it, bounded. */
  private readonly inflight = new Set<Promise<unknown>>();
  /** Stops, convergence and lost-attempt reconciliation (attempt-settler.ts). */
  private readonly settler: AttemptSettler;
  /** Warm task worker processes (reused only after an attempt that ended cleanly). */
  readonly pool: AttemptPool;
  /** Cumulative numbers for /metrics and the reconciler's health. */
  readonly stats = new RunnerStats();
  private readonly readiness: ReadinessPublisher;
  private sweepTimer: ClockTimer | null = null;
  /** Decides when the runner looks again (sweeps, probes, attempt timeouts); never a lease (the database clock does). */
  readonly clock: Clock;
  private readonly probes: PendingProbe;
  private filling: Promise<void> | null = null;
  private refill = false;
  private stopped = true;
  completed = 0;
  /** Wake-ups delivered / dropped by wakeupFault (tests inject lost wake-ups here). */
  wakeups = 0;
  wakeupsDropped = 0;
  /** Test hook: return true to lose a wake-up (the real delivery path, every source). */
  wakeupFault: ((source: WakeupSource) => boolean) | null = null;
  /** The group commit of the successes the worker processes report ('returned'). */
  readonly successes: SuccessCommitter;
  /** The claims each group commit makes for the processes its successes free. */
  private readonly claims: SuccessClaims;
  private readonly launcher: LaunchContext;

  constructor(
    private readonly tasks: TaskStore,
    private readonly registry: TaskRegistry,
    private readonly config: TaskConfig,
    databaseUrl: string | ChildDatabase,
    private readonly logger: Logger,
    options: { workerId?: string; clock?: Clock } = {},
  ) {
    this.workerId = options.workerId ?? newTaskWorkerId();
    this.clock = options.clock ?? systemClock;
    this.settler = new AttemptSettler({
      tasks,
      converger: new Converger(tasks, registry, config, logger),
      config,
      stats: this.stats,
      logger,
      clock: this.clock,
      running: this.running,
      track: (p) => this.track(p),
      taskTypes: () => this.registry.types_(),
    });
    this.claims = new SuccessClaims({
      tasks,
      registry,
      config,
      logger,
      workerId: this.workerId,
      running: this.running,
      stopped: () => this.stopped,
      launch: (task) => this.launch(task),
      track: (p) => this.track(p),
    });
    this.successes = new SuccessCommitter(
      (items) => this.claims.commit(items),
      (item) => commitOneSuccess(tasks, item),
      logger,
    );
    this.pool = new AttemptPool(config, databaseUrl, logger, () => this.notify(), this.clock);
    // A full runner needs no probe: the relay claims when one of its attempts finishes.
    const wanted = () => !this.stopped && !this.filling && this.running.size + this.claims.reserved < this.config.capacity;
    this.probes = new PendingProbe(
      tasks,
      logger,
      (p) => this.track(p),
      wanted,
      (source) => this.wake(source),
      () => this.registry.types_(),
      this.clock,
    );
    this.launcher = {
      workerId: this.workerId,
      tasks,
      registry,
      config,
      logger,
      clock: this.clock,
      pool: this.pool,
      settler: this.settler,
      successes: this.successes,
      running: this.running,
      track: (p) => this.track(p),
      notify: () => this.notify(),
      stopped: () => this.stopped,
      completed: () => {
        this.completed += 1;
      },
    };
    this.readiness = new ReadinessPublisher(tasks, this.workerId, config, this.stats, logger, (p) => this.track(p), this.clock);
  }

  get sweeps(): number {
    return this.stats.sweeps;
  }

  /** Test hook: runs before each group commit of successes (tests hold it past a lease, or cancel meanwhile). */
  set beforeSuccessCommit(hook: ((items: SuccessItem[]) => Promise<void>) | null) {
    this.claims.beforeCommit = hook;
  }

  /** Tasks claimed in the same transaction as a group of successes (tests, metrics). */
  get claimedWithSuccesses(): number {
    return this.claims.claimed;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.readiness.start();
    this.sweepTimer = this.clock.setInterval(() => {
      void this.sweep();
    }, this.config.sweepMs);
    this.probes.start(this.config.wakeupPollMs);
    await this.pool.prepare([this.config.tasksModule, ...this.registry.moduleFiles()]);
    this.pool.prewarm(); // processes start while the first sweep runs
    await this.sweep(); // start-up: reconcile lost attempts and pick up pending work
  }

  /** Lets in-process submissions wake this runner after they commit. */
  attach(service: { onSubmitted: (() => void) | null }): void {
    service.onSubmitted = () => this.wake('submit');
  }

  /** Other processes' submissions wake the probe at once through the wake-up channel (src/notify/); the poll stays. */
  attachNotify(channel: NotifyChannel): void {
    subscribeTaskRunner(channel, () => this.probes.probe('notify'));
  }

  /** The wake-up path: a hint that pending work may exist (losing one only delays the task). */
  wake(source: WakeupSource): void {
    if (this.stopped) return;
    if (this.wakeupFault?.(source)) {
      this.wakeupsDropped += 1;
      return;
    }
    this.wakeups += 1;
    this.notify();
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p)).catch(() => undefined);
    return p;
  }

  /** Whether the reconciler swept successfully within two sweep periods (readiness is published only then). */
  reconcilerHealthy(now = this.clock.now()): boolean {
    return this.readiness.healthy(now);
  }

  /** A wake-up: claim what capacity allows. Several wake-ups merge. */
  notify(): void {
    if (this.stopped) return;
    if (this.filling) {
      this.refill = true;
      return;
    }
    this.filling = this.track(
      this.fill()
        .catch((error: unknown) => {
          this.logger.warn({ err: (error as Error).message }, 'task claim failed; the sweep will retry');
        })
        .finally(() => {
          this.filling = null;
          if (this.refill) {
            this.refill = false;
            this.notify();
          }
        }),
    );
  }

  private async fill(): Promise<void> {
    // config.capacity bounds this process; the claim enforces the database cap across processes
    // (ADR T6). The free slots are claimed in one transaction: slots freed while a claim is under
    // way are taken together by the next one. Only slots with a ready process are claimed for
    // (attempt-pool.ts): the others' processes are started, and each one ready claims again.
    while (!this.stopped && this.running.size + this.claims.reserved < this.config.capacity) {
      const reserved = this.claims.reserved;
      const free = this.config.capacity - this.running.size - reserved;
      // The processes the reserved claims will take are not this claim's.
      const ready = Math.max(0, this.pool.readyIdle() - reserved);
      if (ready < free) this.pool.want(free + reserved);
      const room = Math.min(free, ready, MAX_CLAIM_BATCH);
      if (room === 0) return;
      const claimed = await this.tasks.claimBatch(this.workerId, this.config.leaseMs, this.registry.types_(), room);
      for (const task of claimed) this.launch(task);
      if (claimed.length < room) return; // nothing more claimable now (none pending, or the cap)
    }
  }

  async sweep(): Promise<void> {
    if (this.stopped) return;
    this.stats.sweeps += 1;
    await this.track(this.settler.reconcile());
    // The last resort for lost wake-ups; with free capacity only (a full runner is relayed).
    if (this.running.size < this.config.capacity && !this.stopped) {
      try {
        if (await this.track(this.tasks.hasPending(this.registry.types_()))) this.notify();
      } catch (error) {
        this.logger.warn({ err: (error as Error).message }, 'task sweep probe failed');
      }
    }
  }

  private launch(task: ClaimedTask): void {
    faultPoint('task_claimed'); // chaos suite only: between a task's claim and its first heartbeat
    this.stats.claimed(task.taskType);
    launchAttempt(this.launcher, task);
  }

  get runningCount(): number {
    return this.running.size;
  }

  /** Database calls in flight (claims, sweeps, convergences, readiness): 0 when the runner waits for work. */
  get databaseWorkInFlight(): number {
    return this.inflight.size;
  }

  /**
   * Graceful shutdown: stops claiming, SIGTERMs running attempts (their ctx.signal is aborted and
   * they get TERMINATE_GRACE_SECONDS), converges those that did not finish (requeue of idempotent
   * types, else failed with interrupted_by_shutdown and the failure hook), waits (bounded) for
   * every convergence and database call in flight so the caller can close the store, and
   * withdraws readiness.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.sweepTimer?.cancel();
    this.readiness.stopTimer();
    this.probes.stop();
    await this.filling?.catch(() => undefined);
    // Successes being committed finish (bounded: a hung database call must not hold the stop),
    // and what their batch claimed is given back.
    await settleWithin(this.successes.idle(), this.config.terminateGraceMs + 5000);
    await new Promise((resolve) => setImmediate(resolve));
    // A bound on the shutdown itself, in real time (the grace periods run on this.clock).
    const deadline = Date.now() + this.config.terminateGraceMs + this.config.failureHookTimeoutMs + 5000;
    await settleWithin(Promise.all([...this.running.values()].map((a) => this.settler.stop(a, 'shutdown'))), deadline - Date.now());
    const busy = () => this.running.size > 0 || this.inflight.size > 0;
    const counts = () => ({ running: this.running.size, inflight: this.inflight.size });
    if (busy()) this.logger.info(counts(), 'task runner waiting for database work in flight');
    while (busy() && Date.now() < deadline) await settleWithin(Promise.allSettled([...this.inflight]), 50);
    await this.pool.close();
    if (busy()) this.logger.warn(counts(), 'task runner stopped with database work still in flight');
    await this.readiness.withdraw();
  }
}
