/**
 * The scheduling partition of one family inside a supervisor: its own bounded ready queue, scan
 * cursor, owed-request discovery cursor, backoff index and worker budget (RFC 2, 4, 5, 7).
 * Per key, ready / running / retry-wait are mutually exclusive. Every decision that must survive a
 * crash is taken by a stored operation; this class only keeps what may be lost.
 */
import { InvocationHealth } from './invocation-health.ts';
import { CronExpressionParser } from 'cron-parser';
import type { FamilyConfig } from '../config/runtime-config.ts';
import type { Logger } from '../logging.ts';
import { ScanStaleError, TermLostError } from '../store/errors.ts';

import type { SchedulePolicy, Store, Term } from '../store/types.ts';
import { ackBatcherFor } from './ack-batcher.ts';
import { intentReaderFor } from './intent-reader.ts';
import { BackoffIndex } from './backoff.ts';
import { SCAN_PAGES_PER_EXAMINATION, admissionExclusions } from './admission-page.ts';
import type { WorkerOutcome, WorkerPool } from './worker-pool.ts';
import type { FamilyStats, PartitionHooks, PartitionSettings } from './partition-types.ts';
import { faultPoint } from '../devtools/fault.ts';
import { SPANS, familyAttributes, traced } from '../observability/tracing.ts';

export type { FamilyStats, PartitionHooks, PartitionSettings };

type ReadySource = 'request' | 'scan' | 'retry' | 'successor';

/** Owed-request pages read per examination before the other families get their turn. */
const OWED_PAGES_PER_EXAMINATION = 4;

export class FamilyPartition {
  readonly family: string;
  readonly bindingName: string;
  readonly budget: number;
  private readonly ready: string[] = [];
  private readonly readySources = new Map<string, ReadySource>();
  readonly running = new Map<string, { generation: number; term: Term; workerId: string; startedAt: number }>();
  private readonly retryWait = new Set<string>();
  /** The trigger that first brought a failing key in (failure records of its retries name it). */
  private readonly retryOrigins = new Map<string, ReadySource>();
  /** Keys whose worker returned and whose acknowledgement the supervisor is committing (no worker, still busy). */
  private readonly settling = new Map<string, { generation: number; term: Term; workerId: string; startedAt: number }>();
  readonly backoff: BackoffIndex;
  private scan: { generation: number; cursor: number } | null = null;
  /** Local time (ms) when the schedule is next due; null: unknown, ask the database. */
  private nextDueAt: number | null = null;
  /** True when the schedule should be asked (start, due timer fired, dirty notification). */
  private checkSchedule = true;
  /**
   * Owed-request discovery (requested > handled) goes in laps over pending_sequence. The cursor
   * is kept across examinations, so keys that are busy (ready, running, retry-wait) are passed
   * over once per lap and never hold later keys back. owedNeeded: a lap is in progress or due.
   */
  private owedNeeded = true;
  private owedCursor = 0;
  /** No page of the current lap has been read yet: a notification may still lower its start. */
  private owedFresh = true;
  /** A page read is in flight: a request notified now may be missed by it. */
  private owedReading = false;
  /** Where the next lap starts once this one completes (a request was notified behind the cursor); null: none needed. */
  private owedRevisitFrom: number | null = null;
  private providerBlockedUntil = 0;
  private workerSeq = 0;
  health: 'ok' | 'degraded' = 'ok';
  /** Degraded while every invocation keeps failing (src/runtime/invocation-health.ts). */
  private readonly invocationHealth = new InvocationHealth();
  lastError: string | null = null;
  invocations = 0;
  timeouts = 0;
  readonly failures: Record<string, number> = {};
  private lastDiscoveryMs = 0;
  /** Optional observer of every worker invocation's outcome (metrics); never affects dispatch. */
  onInvocation: ((family: string, outcome: string, durationMs: number) => void) | null = null;
  /** Whether the automatic scan picks first at the next examination (see examine). */
  private scanTurn = false;
  private examinationError = false;
  /** Set at shutdown: outcomes of terminated workers are not failures. */
  private closing = false;
  /** The pending-work calibration in flight, its outcome once done, and its abort handle. */
  private providerRun: Promise<void> | null = null;
  private providerOutcome: boolean | null = null;
  private providerController: AbortController | null = null;

  constructor(
    readonly config: FamilyConfig,
    private readonly store: Store,
    private readonly pool: WorkerPool,
    private readonly settings: PartitionSettings,
    private readonly hooks: PartitionHooks,
    private readonly logger: Logger,
  ) {
    this.family = config.registration.family;
    this.bindingName = config.registration.bindingName;
    this.budget = config.maxWorkers;
    this.backoff = new BackoffIndex({ baseMs: settings.retryBaseMs, maxMs: settings.retryMaxMs, conflictMs: settings.conflictRetryMs, jitter: 0.1 });
  }

  // ---- notifications -------------------------------------------------------------------------

  /**
   * An explicit request was accepted (in this process or, on MySQL, possibly elsewhere). With the
   * key's pending sequence the lap can start just before it; without it (a poll, a foreign
   * commit) anything may have changed. A key ahead of the cursor is found by the lap in
   * progress; one behind it (or notified while a page is read) is found by one more lap, which
   * starts when this one completes: restarting at once would let a stream of requests for early
   * keys keep the lap from ever reaching the later ones.
   */
  notifyRequest(pendingSequence?: number): void {
    const at = pendingSequence !== undefined && pendingSequence > 0 ? pendingSequence - 1 : 0;
    if (!this.owedNeeded) {
      this.owedNeeded = true;
      this.owedCursor = at;
      this.owedFresh = true;
    } else if (this.owedFresh && !this.owedReading) {
      this.owedCursor = Math.min(this.owedCursor, at);
    } else if (this.owedReading || at < this.owedCursor) {
      this.owedRevisitFrom = Math.min(this.owedRevisitFrom ?? Number.MAX_SAFE_INTEGER, at);
    }
  }

  /** Ordinary work was marked dirty: a never-checked interval family may now be due. */
  notifyDirty(): void {
    if (this.nextDueAt === null) this.checkSchedule = true;
  }

  /** Periodic backend poll (MySQL/OceanBase only): cross-process requests and first checks. */
  poll(): void {
    this.notifyRequest(); // position unknown: another lap from the start
    if (this.nextDueAt === null) this.checkSchedule = true;
  }

  /** A new term: forget everything but running workers; recover from the database. */
  resetForNewTerm(): void {
    this.ready.length = 0;
    this.readySources.clear();
    this.retryWait.clear();
    this.retryOrigins.clear();
    this.backoff.clear();
    this.scan = null;
    this.nextDueAt = null;
    this.providerOutcome = null;
    this.checkSchedule = true;
    this.owedNeeded = true;
    this.owedCursor = 0;
    this.owedFresh = true;
    this.owedRevisitFrom = null;
  }

  // ---- queries -------------------------------------------------------------------------------

  /** Backoff entries that count for timers: keys actually waiting (a retry being run keeps its old deadline). */
  private readonly waiting = (scopeId: string): boolean => this.retryWait.has(scopeId);

  /** The worker id of a key's current invocation (running, or settling its acknowledgement). */
  private workerIdOf(scopeId: string): string | undefined {
    return (this.running.get(scopeId) ?? this.settling.get(scopeId))?.workerId;
  }

  private busy(scopeId: string): boolean {
    return this.readySources.has(scopeId) || this.running.has(scopeId) || this.settling.has(scopeId) || this.retryWait.has(scopeId);
  }

  private room(): number {
    return this.settings.readyQueueSize - this.ready.length;
  }

  private hasBudget(): boolean {
    return this.running.size < this.budget;
  }

  private scheduleEnabled(): boolean {
    return this.config.schedule.kind !== 'off';
  }

  private scheduleDue(now: number): boolean {
    if (this.scan) return true;
    if (this.checkSchedule) return true;
    return this.scheduleEnabled() && this.nextDueAt !== null && now >= this.nextDueAt;
  }

  /** Whether examining this family now could do anything (RFC 2: family first). */
  wantsExamination(now: number): boolean {
    const retriesDue = this.retryWait.size > 0 && (this.backoff.nextDeadline(this.waiting) ?? Infinity) <= now;
    const hasIncoming = retriesDue || this.owedNeeded || this.scheduleDue(now);
    if (this.ready.length > 0 && this.hasBudget()) return true;
    return hasIncoming && this.hasBudget() && this.room() > 0;
  }

  /** The earliest local time at which this family needs another look (timers, not polling). */
  nextWakeAt(): number | null {
    // Without a free worker nothing can start, however overdue the family is: the exit of one of
    // its workers wakes the supervisor. (An overdue deadline here would make the loop spin.)
    if (!this.hasBudget()) return null;
    const candidates: number[] = [];
    const retry = this.backoff.nextDeadline(this.waiting);
    if (retry !== null && this.retryWait.size > 0) candidates.push(retry);
    // A calibration in flight wakes the loop when it ends.
    if (this.scheduleEnabled() && !this.scan && !this.providerRun && this.nextDueAt !== null) candidates.push(this.nextDueAt);
    return candidates.length === 0 ? null : Math.min(...candidates);
  }

  // ---- examination ---------------------------------------------------------------------------

  async examine(term: Term): Promise<void> {
    const now = Date.now();
    // Fair share of the bounded ready queue (RFC 2: explicit requests and due retries have no
    // unlimited priority over ordinary work). Due retries and owed requests, and the automatic
    // scan, take turns at picking first: whichever class did not fill the queue last time goes
    // first now, so a steady stream of due retries can never keep the scan's later pages out.
    const scanFirst = this.scanTurn;
    if (scanFirst) await this.maybeAdvanceScan(term, now);
    this.promoteDueRetries(now);
    if (this.owedNeeded && this.room() > 0) await this.discoverOwed();
    if (!scanFirst) await this.maybeAdvanceScan(term, now);
    this.dispatchReady();
    if (this.examinationError) {
      // Recovered from a failed examination (provider errors are tracked by the provider path).
      this.examinationError = false;
      if (!this.lastError?.startsWith('provider')) {
        this.health = 'ok';
        this.lastError = null;
      }
    }
  }

  /** The supervisor reports that examining this family threw (not a lost term): degraded until the next good one. */
  examinationFailed(message: string): void {
    this.health = 'degraded';
    this.lastError = message;
    this.examinationError = true;
  }

  /**
   * Admission is batched: while the ready queue already holds at least `threshold` (half the
   * queue) keys the scan admitted, the next page waits until the queue has room for at least
   * half a queue, so a busy family admits pages of many keys in one transaction instead of one
   * transaction per freed worker slot. Below that share the scan admits into any free room on
   * its turn: explicit requests and due retries filling the queue never keep the scan out (RFC 2:
   * "显式请求与到期重试不拥有无限优先权"); with both backlogs the scan holds about half the queue.
   */
  private admissionRoom(): boolean {
    const room = this.room();
    if (room <= 0) return false;
    const threshold = Math.max(1, Math.min(this.settings.scanPageSize, Math.ceil(this.settings.readyQueueSize / 2)));
    if (room >= threshold || this.ready.length === 0) return true;
    let admitted = 0;
    for (const source of this.readySources.values()) if (source === 'scan') admitted += 1;
    return admitted < threshold;
  }

  private async maybeAdvanceScan(term: Term, now: number): Promise<void> {
    if (this.scheduleDue(now) && this.admissionRoom() && this.hasBudget()) await traced(SPANS.scan, familyAttributes(this.family, this.bindingName), () => this.advanceScan(term));
  }

  private pushReady(scopeId: string, source: ReadySource): boolean {
    if (this.busy(scopeId) || this.room() <= 0) return false;
    this.ready.push(scopeId);
    this.readySources.set(scopeId, source);
    this.scanTurn = source !== 'scan';
    return true;
  }

  private promoteDueRetries(now: number): void {
    for (const key of this.backoff.due(now, this.waiting)) {
      if (!this.retryWait.has(key) || this.room() <= 0) continue;
      this.retryWait.delete(key);
      this.pushReady(key, 'retry');
    }
  }

  /**
   * Reads owed keys from the lap's cursor while the ready queue has room, up to a few pages per
   * examination; when pages remain it asks for another examination (after the other families)
   * instead of waiting for an unrelated wake-up.
   */
  private async discoverOwed(): Promise<void> {
    const started = performance.now();
    for (let pages = 0; pages < OWED_PAGES_PER_EXAMINATION && this.owedNeeded && this.room() > 0; pages += 1) {
      const limit = Math.min(this.settings.scanPageSize, Math.max(64, this.room() * 4));
      this.owedFresh = false;
      this.owedReading = true;
      let page;
      try {
        page = await this.store.listOwedRequests(this.bindingName, this.owedCursor, limit);
      } finally {
        this.owedReading = false;
      }
      let consumedAll = true;
      for (const key of page.keys) {
        // A busy key is owed but already provided for (its dispatch, successor or retry).
        if (this.busy(key.scopeId)) { this.owedCursor = key.pendingSequence; continue; }
        if (this.room() <= 0) { consumedAll = false; break; }
        this.pushReady(key.scopeId, 'request');
        this.owedCursor = key.pendingSequence;
      }
      if (!consumedAll) break; // the queue is full: the lap goes on from here when room frees
      if (page.exhausted) {
        if (this.owedRevisitFrom !== null) {
          this.owedCursor = this.owedRevisitFrom;
          this.owedRevisitFrom = null;
          this.owedFresh = true;
        } else {
          this.owedNeeded = false;
          this.owedCursor = 0;
        }
      }
    }
    if (this.owedNeeded && this.room() > 0) this.hooks.wake();
    this.lastDiscoveryMs = performance.now() - started;
  }

  private async policyNow(): Promise<SchedulePolicy> {
    const schedule = this.config.schedule;
    if (schedule.kind === 'interval') return { kind: 'interval', intervalSeconds: schedule.seconds };
    if (schedule.kind === 'off') return { kind: 'off' };
    const { dbNow } = await this.store.readBindingState(this.bindingName);
    const fire = CronExpressionParser.parse(schedule.expression, { currentDate: new Date(dbNow.getTime() + 1), tz: schedule.timezone }).prev().toDate();
    return { kind: 'cron', fireAt: fire };
  }

  private nextCronFire(dbNow: Date): Date | null {
    const schedule = this.config.schedule;
    if (schedule.kind !== 'cron') return null;
    return CronExpressionParser.parse(schedule.expression, { currentDate: dbNow, tz: schedule.timezone }).next().toDate();
  }

  /**
   * Whether the pending-work calibration for the next check is done. It runs in the background:
   * a slow or hanging provider (bounded by the discovery deadline) delays only this family's
   * scan, never the supervisor loop and so never another family (RFC 1, 2). Its end wakes the loop.
   * A failed or timed-out calibration only delays the scan (RFC 1: "单个提供者异常只延后该制品的
   * 发现并记录错误"): the family is marked degraded and the scan goes on over the dirty marks that
   * exist; the calibration is tried again at a later check, not before the retry base has passed.
   */
  private providerReady(): boolean {
    if (!this.config.registration.pendingWork?.remarkDirty) return true;
    if (this.providerRun) return false;
    if (this.providerOutcome !== null) {
      this.providerOutcome = null;
      return true;
    }
    if (Date.now() < this.providerBlockedUntil) return true; // failed recently: scan without recalibrating
    this.providerRun = this.runProvider()
      .then((ok) => { this.providerOutcome = ok; })
      .finally(() => {
        this.providerRun = null;
        this.hooks.wake();
      });
    return false;
  }

  private async runProvider(): Promise<boolean> {
    const provider = this.config.registration.pendingWork;
    if (!provider?.remarkDirty) return true;
    const controller = new AbortController();
    this.providerController = controller;
    const timer = setTimeout(() => controller.abort(new Error('discovery deadline passed')), this.settings.discoveryTimeoutMs);
    try {
      const work = provider.remarkDirty({
        bindingName: this.bindingName,
        family: this.family,
        signal: controller.signal,
        limit: 10_000,
        markDirty: async (scopeId) => { await this.store.markDirty(this.bindingName, scopeId); },
        query: (sql, params) => this.hooks.providerRead.query(sql, params, { signal: controller.signal }),
      });
      const aborted = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }));
      await Promise.race([work, aborted]);
      if (this.health === 'degraded' && this.lastError?.startsWith('provider')) { this.health = 'ok'; this.lastError = null; }
      return true;
    } catch (error) {
      this.health = 'degraded';
      this.lastError = `provider: ${(error as Error).message}`;
      this.providerBlockedUntil = Date.now() + this.settings.retryBaseMs;
      this.logger.error({ binding: this.bindingName, family: this.family, stage: 'discovery', errorType: (error as Error).name, err: (error as Error).message }, 'pending-work provider failed; the family is degraded and its scan goes on over the existing dirty marks');
      return false;
    } finally {
      clearTimeout(timer);
      if (this.providerController === controller) this.providerController = null;
    }
  }

  private async advanceScan(term: Term): Promise<void> {
    if (!this.scan) {
      if (!this.scheduleEnabled() && !this.checkSchedule) return;
      // Calibrate first; until the calibration has ended (well or not) the check stays pending,
      // and the family stays due.
      if (this.scheduleEnabled() && !this.providerReady()) return;
      this.checkSchedule = false;
      const policy = await this.policyNow();
      const start = await this.store.beginScan(term, this.bindingName, policy);
      const offset = Date.now() - start.dbNow.getTime();
      if (start.outcome === 'not_due') {
        this.setNextDue(start.nextDueAt, start.dbNow, offset);
        return;
      }
      if (!this.scheduleEnabled()) {
        // RFC 4: with automatic processing off no further ordinary dirty scope is admitted; a
        // scan left unfinished under the earlier configuration is ended now, and the requests
        // it already admitted stay owed (they are recovered as owed requests).
        const finish = await this.store.finishScan(term, this.bindingName, start.scanGeneration);
        this.logger.info({ binding: this.bindingName, family: this.family, scanGeneration: finish.scanGeneration }, 'unfinished automatic scan ended: the schedule is off');
        this.setNextDue(null, start.dbNow, offset);
        return;
      }
      this.scan = { generation: start.scanGeneration, cursor: 0 };
      this.setNextDue(start.nextDueAt, start.dbNow, offset);
      this.logger.info({ binding: this.bindingName, family: this.family, scanGeneration: start.scanGeneration, outcome: start.outcome, upperPendingSequence: start.scanUpperPendingSequence }, 'automatic scan begun');
    }
    for (let pages = 0; this.scan && this.admissionRoom(); pages += 1) {
      if (pages === SCAN_PAGES_PER_EXAMINATION) { this.hooks.wake(); return; } // the rest after the other families
      const limit = Math.min(this.settings.scanPageSize, this.room());
      const exclude = admissionExclusions(this.readySources.keys(), this.running.keys());
      let page;
      try {
        page = await traced(SPANS.admissionPage, familyAttributes(this.family, this.bindingName), () => this.store.admitScanPage(term, this.bindingName, this.scan!.generation, this.scan!.cursor, limit, exclude));
      } catch (error) {
        if (!(error instanceof ScanStaleError)) throw error;
        // The binding's scan is not ours any more: forget it and check again from the database.
        this.logger.warn({ binding: this.bindingName, family: this.family, scanGeneration: this.scan.generation }, 'automatic scan went stale; checking again');
        this.scan = null;
        this.checkSchedule = true;
        return;
      }
      if (page.keys.length > 0) faultPoint('after_admission');
      for (const key of page.keys) {
        // Admitted keys are owed in the database; one that finds no room (a successor took it
        // meanwhile) is picked up by owed-request discovery.
        if (!this.pushReady(key.scopeId, 'scan')) this.notifyRequest(key.pendingSequence);
      }
      if (page.keys.length > 0) this.logger.debug({ binding: this.bindingName, family: this.family, admitted: page.keys.length }, 'scan page admitted');
      this.scan.cursor = page.nextAfterSequence;
      if (!page.exhausted) faultPoint('mid_scan');
      if (page.exhausted) {
        const finish = await this.store.finishScan(term, this.bindingName, this.scan.generation);
        this.logger.info({ binding: this.bindingName, family: this.family, scanGeneration: finish.scanGeneration }, 'automatic scan finished');
        this.scan = null;
        // A scan that ends late makes the family due again at once (the database decides).
        if (this.config.schedule.kind === 'interval' && this.nextDueAt !== null && Date.now() >= this.nextDueAt) this.checkSchedule = true;
      }
    }
  }

  private setNextDue(nextDue: Date | null, dbNow: Date, offset: number): void {
    if (this.config.schedule.kind === 'cron') {
      const fire = this.nextCronFire(dbNow);
      this.nextDueAt = fire ? fire.getTime() + offset : null;
    } else if (this.config.schedule.kind === 'interval') {
      this.nextDueAt = nextDue ? nextDue.getTime() + offset : null;
    } else {
      this.nextDueAt = null;
    }
  }

  // ---- dispatch ------------------------------------------------------------------------------

  private dispatchReady(): void {
    while (this.hasBudget() && this.ready.length > 0) {
      const scopeId = this.ready.shift()!;
      const source = this.readySources.get(scopeId)!;
      this.readySources.delete(scopeId);
      const term = this.hooks.currentTerm();
      if (!term) {
        this.ready.unshift(scopeId);
        this.readySources.set(scopeId, source);
        return;
      }
      const workerId = `${this.family}-${++this.workerSeq}`;
      this.running.set(scopeId, { generation: 0, term, workerId, startedAt: Date.now() });
      void traced(SPANS.dispatch, familyAttributes(this.family, this.bindingName), () => this.invoke(scopeId, term, workerId, source));
    }
  }

  private async invoke(scopeId: string, term: Term, workerId: string, source: ReadySource): Promise<void> {
    let outcome: WorkerOutcome | null = null;
    let generation = 0;
    let successor = false;
    let pendingSequence: number | undefined;
    try {
      // Read at dispatch (queued requests merge into it), together with the other keys of this turn.
      const intent = await intentReaderFor(this.store).read(this.bindingName, scopeId);
      pendingSequence = intent?.pendingSequence;
      if (!intent || intent.requestedGeneration <= intent.handledGeneration) {
        this.backoff.succeed(scopeId);
        this.retryOrigins.delete(scopeId);
        return; // nothing owed any more (merged into an earlier invocation)
      }
      generation = intent.requestedGeneration;
      this.running.get(scopeId)!.generation = generation;
      this.invocations += 1;
      outcome = await this.pool.run(scopeId, {
        bindingName: this.bindingName,
        artifactFamily: this.family,
        claimedRequestGeneration: generation,
        supervisorKey: term.supervisorKey,
        holderId: term.holderId,
        supervisorGeneration: term.supervisorGeneration,
        workerId,
      }, intent);
      try { this.onInvocation?.(this.family, outcome.status, outcome.durationMs); } catch { /* an observer never disturbs dispatch */ }
      const deferred = outcome.status === 'ok' && 'deferredAcknowledgement' in outcome ? outcome.deferredAcknowledgement : undefined;
      if (deferred) {
        // The worker is done and back in the pool: its budget slot is free while the supervisor
        // commits the acknowledgement (batched); the key stays busy (settling) until then.
        const entry = this.running.get(scopeId);
        this.running.delete(scopeId);
        if (entry) this.settling.set(scopeId, entry);
        this.hooks.wake();
        outcome = await this.commitDeferredAck(scopeId, term, generation, deferred.confirmClean ? intent.dirtyGeneration : null, outcome);
      }
      successor = await this.settle(scopeId, term, generation, outcome, source);
    } catch (error) {
      if (error instanceof TermLostError) this.hooks.termLost(term);
      else if (!this.closing) this.recordFailure(scopeId, term, generation, 'dispatch_error', error as Error, source);
    } finally {
      this.running.delete(scopeId);
      this.settling.delete(scopeId);
      // At most one successor; it merges every request accepted meanwhile (the key is no longer
      // running, so it can take its place in the ready queue at once).
      if (successor && !this.closing && !this.pushReady(scopeId, 'successor')) this.notifyRequest(pendingSequence);
      this.hooks.wake();
    }
  }

  /**
   * A worker that returned after `ctx.acknowledge()` leaves the commit to the supervisor: it is
   * committed here (batched with other workers', fenced by the invocation's term) and the outcome
   * then carries the committed row like an acknowledgement the worker committed itself.
   */
  private async commitDeferredAck(scopeId: string, term: Term, generation: number, cleanThroughDirtyGeneration: number | null, outcome: WorkerOutcome): Promise<WorkerOutcome> {
    try {
      const ack = await ackBatcherFor(this.store).acknowledge(term, { bindingName: this.bindingName, scopeId, claimedRequestGeneration: generation, cleanThroughDirtyGeneration });
      return { status: 'ok', durationMs: outcome.durationMs, pid: outcome.pid, acknowledgement: ack };
    } catch (error) {
      if (error instanceof TermLostError) return { status: 'term_lost', durationMs: outcome.durationMs, pid: outcome.pid, error: { name: error.name, message: error.message, code: 'term_lost' } };
      return { status: 'failed', durationMs: outcome.durationMs, pid: outcome.pid, error: { name: (error as Error).name, message: `acknowledgement failed: ${(error as Error).message}` } };
    }
  }

  /** Books the outcome of one invocation; returns whether a successor invocation is owed. */
  private async settle(scopeId: string, term: Term, generation: number, outcome: WorkerOutcome, source: ReadySource): Promise<boolean> {
    const current = this.hooks.currentTerm();
    const sameTerm = current && current.supervisorGeneration === term.supervisorGeneration && current.holderId === term.holderId;
    if (outcome.status === 'term_lost') {
      this.hooks.termLost(term);
      return false;
    }
    if (!sameTerm) return false; // the new term recovers this key from the database
    const workerId = this.workerIdOf(scopeId);
    if (outcome.status === 'timeout') this.timeouts += 1;
    if (this.closing) {
      // Shutdown terminated the worker: its request stays owed for the next term (RFC 9).
      this.logger.info({ binding: this.bindingName, family: this.family, scope: scopeId, requestGeneration: generation, workerId, outcome: outcome.status }, 'invocation ended by shutdown');
      return false;
    }
    // Never report done without the persisted acknowledgement (RFC 5), and never report a
    // failure for an invocation whose acknowledgement did commit (the worker crashed, timed out
    // or threw only after its commit: the notification was lost, the work is done).
    // A worker that reports 'ok' sends the row its committed acknowledgement left (a persisted
    // fact, not an exit code); every other outcome is checked against the database.
    const after = outcome.status === 'conflict' ? null
      : outcome.status === 'ok' && 'acknowledgement' in outcome && outcome.acknowledgement ? outcome.acknowledgement
        : await this.store.readIntent(this.bindingName, scopeId);
    const acknowledged = after !== null && after.handledGeneration >= generation;
    if (acknowledged) {
      this.invocationHealth.succeeded();
      this.backoff.succeed(scopeId);
      this.retryOrigins.delete(scopeId);
      const normal = outcome.status === 'ok' || outcome.status === 'already_handled';
      (normal ? this.logger.info : this.logger.warn).call(this.logger, {
        binding: this.bindingName, family: this.family, scope: scopeId, trigger: source, requestGeneration: generation,
        outcome: outcome.status, durationMs: Math.round(outcome.durationMs), workerId,
        ordinaryWorkLeft: after.dirtyGeneration > after.cleanGeneration,
      }, normal ? 'scope invocation acknowledged' : 'worker ended abnormally after its acknowledgement committed; invocation done');
      return after.requestedGeneration > after.handledGeneration;
    }
    switch (outcome.status) {
      case 'ok':
      case 'already_handled':
        this.recordFailure(scopeId, term, generation, 'not_acknowledged', new Error('worker returned without a persisted acknowledgement'), source, outcome);
        return false;
      case 'conflict': {
        const entry = this.backoff.conflict(scopeId, 'conflict', Date.now());
        this.retryWait.add(scopeId);
        this.logger.info({ binding: this.bindingName, family: this.family, scope: scopeId, requestGeneration: generation, delayMs: entry.nextRetryAt - Date.now(), consecutiveFailures: entry.consecutiveFailures }, 'progress conflict; re-dispatch after a short delay');
        return false;
      }
      case 'timeout':
        this.recordFailure(scopeId, term, generation, 'timeout', new Error(outcome.error?.message ?? 'timeout'), source, outcome);
        return false;
      default:
        this.recordFailure(scopeId, term, generation, outcome.status, Object.assign(new Error(outcome.error?.message ?? outcome.status), { name: outcome.error?.name ?? 'Error' }), source, outcome);
        return false;
    }
  }

  private recordFailure(scopeId: string, term: Term, generation: number, reason: string, error: Error, source: ReadySource, outcome?: WorkerOutcome): void {
    const entry = this.backoff.fail(scopeId, reason, Date.now());
    this.retryWait.add(scopeId);
    this.failures[reason] = (this.failures[reason] ?? 0) + 1;
    this.invocationHealth.failed(reason, error.message);
    // A retry's record names the trigger that first brought the key in (RFC 12 触发原因).
    const trigger = source === 'retry' ? this.retryOrigins.get(scopeId) ?? 'retry' : source;
    this.retryOrigins.set(scopeId, trigger);
    this.logger.warn({
      binding: this.bindingName,
      family: this.family,
      scope: scopeId,
      trigger,
      retry: source === 'retry',
      requestGeneration: generation,
      workerId: this.workerIdOf(scopeId),
      supervisorKey: term.supervisorKey,
      holderId: term.holderId,
      supervisorGeneration: term.supervisorGeneration,
      stage: outcome ? 'invocation' : 'dispatch',
      errorCode: reason,
      errorType: error.name,
      err: error.message,
      attempt: entry.consecutiveFailures,
      retryInMs: entry.nextRetryAt - Date.now(),
    }, 'scope invocation failed');
  }

  /** Terminates the workers of the lost term (they stay counted until their exit is confirmed). */
  async terminateRunning(): Promise<void> {
    await this.pool.terminateBusy();
  }

  /** Shutdown: no new dispatch; running workers are terminated within the grace period. */
  async close(): Promise<void> {
    this.closing = true;
    this.providerController?.abort(new Error('shutting down'));
    this.ready.length = 0;
    this.readySources.clear();
    await this.pool.close();
  }

  stats(): FamilyStats {
    const s = this.config.schedule;
    return {
      family: this.family,
      bindingName: this.bindingName,
      schedule: s.kind === 'interval' ? `interval ${s.seconds}s` : s.kind === 'cron' ? `cron ${s.expression} ${s.timezone}` : 'off',
      budget: this.budget,
      running: this.running.size,
      ready: this.ready.length,
      retryWait: this.retryWait.size,
      scanInProgress: this.scan !== null,
      nextDueAt: this.nextDueAt === null ? null : new Date(this.nextDueAt).toISOString(),
      health: this.invocationHealth.degraded ? 'degraded' : this.health,
      lastError: this.lastError ?? this.invocationHealth.lastError,
      invocations: this.invocations,
      failures: { ...this.failures },
      timeouts: this.timeouts,
      workerProcesses: this.pool.processCount,
      workerSpawns: this.pool.spawned,
    };
  }

  get discoveryLatencyMs(): number {
    return this.lastDiscoveryMs;
  }
}
