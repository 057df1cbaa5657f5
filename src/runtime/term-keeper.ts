/**
 * Term keeper of one supervisor key. SQLite: takes the term once at start (every legitimate
 * start increments the generation; no expiry, no renewal), retrying a failed acquisition (a held
 * write lock) with a bounded backoff until it leads or stops. MySQL/OceanBase: competes for the
 * lease, renews it on a short period while leading, and stays a healthy standby otherwise.
 *
 * RFC 8 ("续租失败立即停止派发，尽力终止 Worker"): a renewal that fails or does not answer within
 * its bound suspends dispatch at once ('suspended'); the keeper keeps retrying, and only a
 * successful renewal of the same term resumes dispatch ('resumed'). The term is lost ('lost':
 * the supervisor terminates its workers) on term_lost or when the local deadline (the start of
 * the last good renewal + TTL, never later than the database's expiry) passes, whether or not a
 * renewal is still pending: a hung statement cannot keep an old leader dispatching. Shutdown
 * never waits for a hung renewal longer than a bound.
 */
import { EventEmitter } from 'node:events';
import { TermLostError } from '../store/errors.ts';
import type { Store, Term } from '../store/types.ts';
import type { Logger } from '../logging.ts';
import { LeaseLog, LeaseTimeoutError } from './lease-events.ts';
import { faultPoint } from '../devtools/fault.ts';
import { systemClock, within, type Clock, type ClockTimer } from './clock.ts';
import { acquisitionRetryMs, MIN_STATEMENT_BOUND_MS, periodBoundMs, renewalDelayMs, statementBoundMs } from './term-timing.ts';

export type TermState = 'starting' | 'leader' | 'standby' | 'stopped';

export interface TermKeeperOptions {
  supervisorKey: string;
  holderId: string;
  ttlMs: number;
  renewEveryMs: number;
  logger: Logger;
  /** Local deadlines and timers (default: the system clock); the lease itself is the database's. */
  clock?: Clock;
}

export declare interface TermKeeper {
  on(event: 'acquired', listener: (term: Term) => void): this;
  on(event: 'lost', listener: (term: Term, reason: string) => void): this;
  on(event: 'standby', listener: (holderId: string | null) => void): this;
  on(event: 'suspended', listener: (term: Term, reason: string) => void): this;
  on(event: 'resumed', listener: (term: Term) => void): this;
}

export class TermKeeper extends EventEmitter {
  state: TermState = 'starting';
  term: Term | null = null;
  /** Local monotonic deadline after which the term must be considered lost without a renewal. */
  private localDeadline = 0;
  private timer: ClockTimer | null = null;
  /** Fires at the local deadline: the term is lost then, whatever a pending renewal does. */
  private deadlineTimer: ClockTimer | null = null;
  private stopped = false;
  /** A term this keeper gave up that the database may still hold for it (invalidated before the next acquisition). */
  private lostTerm: Term | null = null;
  /** True from a failed (or unanswered) renewal until a renewal of the same term succeeds. */
  suspended = false;
  private busy: Promise<void> = Promise.resolve();
  /** Consecutive failed renewals of the current term (reset by a good renewal). */
  renewalFailures = 0;
  /** Every failed renewal since this keeper started (only increases: the metric's source). */
  renewalFailuresTotal = 0;
  termChanges = 0;
  /** Consecutive failed acquisitions (reset when the term is taken). */
  acquisitionFailures = 0;

  private readonly log: LeaseLog;
  private readonly clock: Clock;

  constructor(
    private readonly store: Store,
    private readonly options: TermKeeperOptions,
  ) {
    super();
    this.log = new LeaseLog(options.logger, options.supervisorKey);
    this.clock = options.clock ?? systemClock;
  }

  get supervisorKey(): string {
    return this.options.supervisorKey;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.cycle();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer?.cancel();
    this.timer = this.clock.setTimeout(() => {
      this.busy = this.cycle();
    }, delayMs);
  }

  private async cycle(): Promise<void> {
    if (this.stopped) return;
    const { supervisorKey, holderId, ttlMs } = this.options;
    const startedAt = this.clock.monotonic();
    const renewing = this.store.backend === 'sqlite' ? null : this.term;
    let invalidating: Term | null = null;
    try {
      if (this.store.backend === 'sqlite') {
        if (!this.term) {
          const result = await this.store.acquireTerm(supervisorKey, holderId, ttlMs);
          this.becomeLeader({ supervisorKey, holderId, supervisorGeneration: result.supervisorGeneration });
        }
        return; // no renewal on SQLite
      }
      if (renewing) {
        const term = renewing;
        const bound = statementBoundMs(this.options.renewEveryMs, this.localDeadline - this.clock.monotonic());
        await within(this.clock, this.store.renewTerm(term, ttlMs), bound, () => new LeaseTimeoutError('renewal', bound));
        if (this.term !== term) {
          this.log.lateRenewal(term, null);
          return;
        } // lost meanwhile: stay lost
        this.setDeadline(startedAt + ttlMs);
        this.renewalFailures = 0;
        if (this.suspended) {
          this.suspended = false;
          this.log.renewalResumed(term);
          this.emit('resumed', term);
        }
      } else {
        const bound = Math.max(MIN_STATEMENT_BOUND_MS, ttlMs / 2);
        if (this.lostTerm) {
          // A term given up locally (deadline) may still be live in the database: make its
          // commits fail before leading again (RFC 6: "任期变化必须先使旧提交失效，再恢复新派发"),
          // so the same holder never resumes the old generation.
          const lost = this.lostTerm;
          invalidating = lost;
          try {
            await within(
              this.clock,
              this.store.invalidateTerm(supervisorKey, { holderId: lost.holderId, supervisorGeneration: lost.supervisorGeneration }),
              bound,
              () => new LeaseTimeoutError('invalidation', bound),
            );
          } catch (error) {
            if (!(error instanceof TermLostError)) throw error;
          }
          invalidating = null;
          this.lostTerm = null;
        }
        const result = await within(
          this.clock,
          this.store.acquireTerm(supervisorKey, holderId, ttlMs),
          bound,
          () => new LeaseTimeoutError('acquisition', bound),
        );
        if (this.stopped) return;
        if (result.outcome === 'acquired' || result.outcome === 'renewed') {
          this.setDeadline(startedAt + ttlMs);
          this.becomeLeader({ supervisorKey, holderId, supervisorGeneration: result.supervisorGeneration });
        } else if (this.state !== 'standby') {
          this.state = 'standby';
          this.log.standby(result.holderId);
          this.emit('standby', result.holderId);
        }
      }
    } catch (error) {
      if (renewing && this.term !== renewing) {
        this.log.lateRenewal(renewing, error); // the deadline (or a fenced write) already gave the term up
      } else if (renewing) {
        this.renewalFailures += 1;
        this.renewalFailuresTotal += 1;
        if (error instanceof TermLostError || this.clock.monotonic() >= this.localDeadline) {
          this.lose(error instanceof TermLostError ? 'term_lost' : 'renewal_deadline_passed');
        } else {
          const first = !this.suspended;
          this.suspended = true;
          this.log.renewalFailed(renewing, error, first, this.renewalFailures, this.localDeadline - this.clock.monotonic(), this.nextDelayMs());
          if (first) this.emit('suspended', renewing, (error as Error).message);
        }
      } else if (invalidating) {
        this.log.invalidationFailed(invalidating, error, this.nextDelayMs());
      } else {
        this.acquisitionFailures += 1;
        this.log.acquisitionFailed(error, this.acquisitionFailures, this.nextDelayMs());
      }
    } finally {
      if (this.store.backend !== 'sqlite' || !this.term) this.schedule(this.nextDelayMs());
    }
  }

  /** When the next cycle runs (term-timing.ts); SQLite, not leading (RFC 8: keep trying, readiness `starting`): the backoff. */
  private nextDelayMs(): number {
    if (this.store.backend === 'sqlite') return acquisitionRetryMs(this.options.renewEveryMs, this.acquisitionFailures);
    const remaining = this.term ? this.localDeadline - this.clock.monotonic() : Infinity;
    return renewalDelayMs(this.options.renewEveryMs, remaining, this.suspended);
  }

  private setDeadline(at: number): void {
    this.localDeadline = at;
    this.deadlineTimer?.cancel();
    this.deadlineTimer = this.clock.setTimeout(
      () => {
        this.deadlineTimer = null;
        if (!this.term) return;
        if (this.clock.monotonic() < this.localDeadline) {
          this.setDeadline(this.localDeadline);
          return;
        }
        this.lose('renewal_deadline_passed');
      },
      Math.max(0, at - this.clock.monotonic()),
    );
  }

  private becomeLeader(term: Term): void {
    this.term = term;
    this.acquisitionFailures = 0;
    this.state = 'leader';
    this.termChanges += 1;
    this.log.acquired(term);
    faultPoint('term_change');
    this.emit('acquired', term);
  }

  private lose(reason: string): void {
    const term = this.term;
    this.term = null;
    this.suspended = false;
    if (this.deadlineTimer) {
      this.deadlineTimer.cancel();
      this.deadlineTimer = null;
    }
    if (term && this.store.backend !== 'sqlite') this.lostTerm = term;
    this.state = this.stopped ? 'stopped' : 'standby';
    this.termChanges += 1;
    if (term) {
      this.log.lost(term, reason);
      this.emit('lost', term, reason);
    }
  }

  /**
   * Called when a fenced write reported term_lost: stop trusting the term at once. On
   * MySQL/OceanBase the keeper competes again (as a candidate). On SQLite a lost term means
   * another host took it: the keeper stops for good instead of taking it back, so two hosts never
   * alternate on one database file.
   */
  reportLost(term: Term): void {
    if (this.term && this.term.supervisorGeneration === term.supervisorGeneration && this.term.holderId === term.holderId) {
      if (this.store.backend === 'sqlite') {
        this.stopped = true;
        this.lose('superseded');
        return;
      }
      this.lose('term_lost');
      this.schedule(0);
    }
  }

  /**
   * Stops renewing and invalidates the term in the database (shutdown). A pending renewal is
   * awaited for at most one statement bound, and so is the invalidation: a hung database
   * connection delays shutdown, it never blocks it (the lease then simply expires).
   */
  async stop(invalidate = true): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    if (this.deadlineTimer) {
      this.deadlineTimer.cancel();
      this.deadlineTimer = null;
    }
    const bound = periodBoundMs(this.options.renewEveryMs);
    await within(this.clock, this.busy, bound, () => new LeaseTimeoutError('renewal', bound)).catch(() => undefined);
    const term = this.term;
    this.term = null;
    this.suspended = false;
    this.state = 'stopped';
    if (term && invalidate) {
      try {
        await within(
          this.clock,
          this.store.invalidateTerm(term.supervisorKey, { holderId: term.holderId, supervisorGeneration: term.supervisorGeneration }),
          bound,
          () => new LeaseTimeoutError('invalidation', bound),
        );
      } catch (error) {
        if (!(error instanceof TermLostError)) this.log.shutdownInvalidationFailed(term, error);
      }
    }
  }
}
