/**
 * The scheduling partition of one family inside a supervisor (RFC 2, 4, 5, 7): it composes the
 * key-state table (key-states.ts), owed-request discovery (owed-discovery.ts), the schedule and
 * scan (schedule-scan.ts), the provider calibration (calibration.ts) and the invocations
 * (invocation.ts), and decides the order of one examination. Every decision that must survive
 * a crash is taken by a stored operation; this only keeps what may be lost.
 */
import type { FamilyConfig } from '../config/runtime-config.ts';
import type { Logger } from '../logging.ts';
import type { Store, Term } from '../store/types.ts';
import { BackoffIndex } from './backoff.ts';
import { ProviderCalibration } from './calibration.ts';
import { systemClock, type Clock } from './clock.ts';
import { FamilyHealth } from './family-health.ts';
import { Invoker, type InvocationRecord } from './invocation.ts';
import { KeyStateTable, type ReadySource } from './key-states.ts';
import { OwedDiscovery } from './owed-discovery.ts';
import type { FamilyStats, PartitionHooks, PartitionSettings } from './partition-types.ts';
import { ScheduleScan } from './schedule-scan.ts';
import type { WorkerPool } from './worker-pool.ts';

export type { FamilyStats, PartitionHooks, PartitionSettings };

export class FamilyPartition {
  readonly family: string;
  readonly bindingName: string;
  readonly budget: number;
  readonly backoff: BackoffIndex;
  private readonly clock: Clock;
  private readonly table: KeyStateTable;
  private readonly owed: OwedDiscovery;
  private readonly schedule: ScheduleScan;
  private readonly calibration: ProviderCalibration;
  private readonly health = new FamilyHealth();
  private readonly invoker: Invoker;
  /** Whether the automatic scan picks first at the next examination (see examine). */
  private scanTurn = false;

  constructor(
    readonly config: FamilyConfig,
    private readonly store: Store,
    private readonly pool: WorkerPool,
    settings: PartitionSettings,
    private readonly hooks: PartitionHooks,
    logger: Logger,
    clock: Clock = systemClock,
  ) {
    this.family = config.registration.family;
    this.bindingName = config.registration.bindingName;
    this.budget = config.maxWorkers;
    this.clock = clock;
    this.backoff = new BackoffIndex({ baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs, conflictMs: settings.conflictRetryMs, jitter: 0.1 });
    this.table = new KeyStateTable(settings.readyQueueSize);
    this.owed = new OwedDiscovery(clock, settings.scanPageSize);
    this.calibration = new ProviderCalibration(
      config.registration.pendingWork,
      settings,
      {
        bindingName: this.bindingName,
        family: this.family,
        markDirty: async (scopeId) => {
          await store.markDirty(this.bindingName, scopeId);
        },
        query: (sql, params, signal) => hooks.providerRead.query(sql, params, { signal }),
        wake: () => hooks.wake(),
        providerFailed: (message) => this.health.providerFailed(message),
        providerSucceeded: () => this.health.providerSucceeded(),
      },
      clock,
      logger,
    );
    this.schedule = new ScheduleScan(
      this.bindingName,
      this.family,
      config.schedule,
      settings,
      {
        store,
        table: this.table,
        enqueue: (scopeId) => this.enqueue(scopeId, 'scan'),
        notifyRequest: (pendingSequence) => this.notifyRequest(pendingSequence),
        calibrated: () => this.calibration.ready(),
        hasBudget: () => this.invoker.hasBudget(),
        wake: () => hooks.wake(),
      },
      clock,
      logger,
    );
    this.invoker = new Invoker({
      family: this.family,
      bindingName: this.bindingName,
      budget: this.budget,
      store,
      pool,
      table: this.table,
      backoff: this.backoff,
      health: this.health,
      hooks,
      enqueue: (scopeId, source) => this.enqueue(scopeId, source),
      notifyRequest: (pendingSequence) => this.notifyRequest(pendingSequence),
      clock,
      logger,
    });
  }

  /** Optional observer of every worker invocation's outcome (metrics); never affects dispatch. */
  get onInvocation(): Invoker['onInvocation'] {
    return this.invoker.onInvocation;
  }

  set onInvocation(observer: Invoker['onInvocation']) {
    this.invoker.onInvocation = observer;
  }

  /** Adds an observer of each invocation's outcome with its key (the console); returns its removal. */
  observeInvocations(observer: (record: InvocationRecord) => void): () => void {
    this.invoker.observers.add(observer);
    return () => this.invoker.observers.delete(observer);
  }

  // ---- notifications -------------------------------------------------------------------------

  /** An explicit request was accepted (here or, on MySQL, possibly elsewhere): see owed-discovery.ts. */
  notifyRequest(pendingSequence?: number): void {
    this.owed.notify(pendingSequence);
  }

  /** Ordinary work was marked dirty: a never-checked interval family may now be due. */
  notifyDirty(): void {
    this.schedule.notifyDirty();
  }

  /** Periodic backend poll (MySQL/OceanBase only): cross-process requests and first checks. */
  poll(): void {
    this.owed.notify(); // position unknown: another lap from the start
    this.schedule.notifyDirty();
  }

  /** A new term: forget everything but running workers; recover from the database. */
  resetForNewTerm(): void {
    this.table.resetForNewTerm();
    this.backoff.clear();
    this.schedule.reset();
    this.calibration.reset();
    this.owed.reset();
  }

  // ---- queries -------------------------------------------------------------------------------

  /** Backoff entries that count for timers: keys actually waiting (a retry being run keeps its old deadline). */
  private readonly waiting = (scopeId: string): boolean => this.table.get(scopeId)?.mode === 'retry_wait';

  /** Whether examining this family now could do anything (RFC 2: family first). */
  wantsExamination(now: number): boolean {
    const hasBudget = this.invoker.hasBudget();
    const retriesDue = this.table.count('retry_wait') > 0 && (this.backoff.nextDeadline(this.waiting) ?? Infinity) <= now;
    const hasIncoming = retriesDue || this.owed.needed || this.schedule.due(now);
    if (this.table.count('ready') > 0 && hasBudget) return true;
    return hasIncoming && hasBudget && this.table.room() > 0;
  }

  /** The earliest local time at which this family needs another look (timers, not polling). */
  nextWakeAt(): number | null {
    // Without a free worker nothing can start, however overdue the family is: the exit of one of
    // its workers wakes the supervisor. (An overdue deadline here would make the loop spin.)
    if (!this.invoker.hasBudget()) return null;
    const candidates: number[] = [];
    const retry = this.backoff.nextDeadline(this.waiting);
    if (retry !== null && this.table.count('retry_wait') > 0) candidates.push(retry);
    // A calibration in flight wakes the loop when it ends.
    const due = this.schedule.wakeAt(this.calibration.inFlight);
    if (due !== null) candidates.push(due);
    return candidates.length === 0 ? null : Math.min(...candidates);
  }

  // ---- examination ---------------------------------------------------------------------------

  async examine(term: Term): Promise<void> {
    const now = this.clock.now();
    // Fair share of the bounded ready queue (RFC 2): due retries and owed requests, and the
    // automatic scan, take turns at picking first: whichever class did not fill the queue last
    // time goes first now, so a steady stream of due retries never keeps the scan's later pages out.
    const scanFirst = this.scanTurn;
    // Keys already ready go out before this examination waits for a page.
    this.invoker.dispatch();
    if (scanFirst) await this.schedule.maybeAdvance(term, now);
    this.promoteDueRetries(now);
    if (this.owed.needed && this.table.room() > 0) {
      await this.owed.discover({
        read: (after, limit) => this.store.listOwedRequests(this.bindingName, after, limit),
        busy: (scopeId) => this.table.busy(scopeId),
        passedOver: (scopeId, requestedGeneration) => this.table.owedWhileBusy(scopeId, requestedGeneration),
        room: () => this.table.room(),
        enqueue: (scopeId) => {
          this.enqueue(scopeId, 'request');
        },
        wake: () => this.hooks.wake(),
      });
    }
    if (!scanFirst) await this.schedule.maybeAdvance(term, now);
    this.invoker.dispatch();
    // Recovered from a failed examination (provider errors are tracked by the provider path).
    this.health.examinationSucceeded();
  }

  /** The supervisor reports that examining this family threw (not a lost term): degraded until the next good one. */
  examinationFailed(message: string): void {
    this.health.examinationFailed(message);
  }

  private enqueue(scopeId: string, source: ReadySource): boolean {
    if (!this.table.enqueue(scopeId, source)) return false;
    this.scanTurn = source !== 'scan';
    return true;
  }

  private promoteDueRetries(now: number): void {
    for (const key of this.backoff.due(now, this.waiting)) {
      if (this.table.room() <= 0) continue;
      if (this.table.promote(key)) this.scanTurn = true;
    }
  }

  /** Terminates the workers of the lost term (they stay counted until their exit is confirmed). */
  async terminateRunning(): Promise<void> {
    await this.pool.terminateBusy();
  }

  /** Shutdown: no new dispatch; running workers are terminated within the grace period. */
  async close(): Promise<void> {
    this.invoker.closing = true;
    this.calibration.abort();
    this.table.dropReady();
    await this.pool.close();
  }

  stats(): FamilyStats {
    const s = this.config.schedule;
    const nextDueAt = this.schedule.nextDue;
    return {
      family: this.family,
      bindingName: this.bindingName,
      schedule: s.kind === 'interval' ? `interval ${s.seconds}s` : s.kind === 'cron' ? `cron ${s.expression} ${s.timezone}` : 'off',
      budget: this.budget,
      running: this.table.count('running'),
      ready: this.table.count('ready'),
      retryWait: this.table.count('retry_wait'),
      scanInProgress: this.schedule.inProgress,
      nextDueAt: nextDueAt === null ? null : new Date(nextDueAt).toISOString(),
      health: this.health.state,
      lastError: this.health.lastError,
      invocations: this.invoker.invocations,
      failures: { ...this.invoker.failures },
      timeouts: this.invoker.timeouts,
      workerProcesses: this.pool.processCount,
      workerSpawns: this.pool.spawned,
    };
  }

  get discoveryLatencyMs(): number {
    return this.owed.lastDurationMs;
  }
}
