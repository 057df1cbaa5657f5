/**
 * Term keeper of one supervisor key. SQLite: takes the term once at start (every legitimate
 * start increments the generation; no expiry, no renewal). MySQL/OceanBase: competes for the
 * lease, renews it on a short period while leading, and stays a healthy standby otherwise; a
 * failed renewal (lost term, or no confirmed renewal before the local deadline) reports the loss
 * at once so the supervisor stops dispatching.
 */
import { EventEmitter } from 'node:events';
import { TermLostError } from '../store/errors.ts';
import type { Store, Term } from '../store/types.ts';
import type { Logger } from '../logging.ts';

export type TermState = 'starting' | 'leader' | 'standby' | 'stopped';

export interface TermKeeperOptions {
  supervisorKey: string;
  holderId: string;
  ttlMs: number;
  renewEveryMs: number;
  logger: Logger;
}

export declare interface TermKeeper {
  on(event: 'acquired', listener: (term: Term) => void): this;
  on(event: 'lost', listener: (term: Term, reason: string) => void): this;
  on(event: 'standby', listener: (holderId: string | null) => void): this;
}

export class TermKeeper extends EventEmitter {
  state: TermState = 'starting';
  term: Term | null = null;
  /** Local monotonic deadline after which the term must be considered lost without a renewal. */
  private localDeadline = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private busy: Promise<void> = Promise.resolve();
  /** Consecutive failed renewals of the current term (reset by a good renewal). */
  renewalFailures = 0;
  /** Every failed renewal since this keeper started (only increases: the metric's source). */
  renewalFailuresTotal = 0;
  termChanges = 0;

  constructor(private readonly store: Store, private readonly options: TermKeeperOptions) {
    super();
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
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.busy = this.cycle(); }, delayMs);
    this.timer.unref?.();
  }

  private async cycle(): Promise<void> {
    if (this.stopped) return;
    const { supervisorKey, holderId, ttlMs, renewEveryMs, logger } = this.options;
    const startedAt = performance.now();
    try {
      if (this.store.backend === 'sqlite') {
        if (!this.term) {
          const result = await this.store.acquireTerm(supervisorKey, holderId, ttlMs);
          this.becomeLeader({ supervisorKey, holderId, supervisorGeneration: result.supervisorGeneration });
        }
        return; // no renewal on SQLite
      }
      if (this.term) {
        await this.store.renewTerm(this.term, ttlMs);
        this.localDeadline = startedAt + ttlMs;
        this.renewalFailures = 0;
      } else {
        const result = await this.store.acquireTerm(supervisorKey, holderId, ttlMs);
        if (result.outcome === 'acquired' || result.outcome === 'renewed') {
          this.localDeadline = startedAt + ttlMs;
          this.becomeLeader({ supervisorKey, holderId, supervisorGeneration: result.supervisorGeneration });
        } else if (this.state !== 'standby') {
          this.state = 'standby';
          this.emit('standby', result.holderId);
        }
      }
    } catch (error) {
      if (this.term) {
        this.renewalFailures += 1;
        this.renewalFailuresTotal += 1;
        if (error instanceof TermLostError || performance.now() >= this.localDeadline) {
          this.lose(error instanceof TermLostError ? 'term_lost' : 'renewal_deadline_passed');
        } else {
          logger.warn({ supervisorKey, err: (error as Error).message }, 'lease renewal failed; retrying before the lease expires');
        }
      } else {
        logger.warn({ supervisorKey, err: (error as Error).message }, 'lease acquisition failed; retrying');
      }
    } finally {
      if (this.store.backend !== 'sqlite') this.schedule(renewEveryMs);
    }
  }

  private becomeLeader(term: Term): void {
    this.term = term;
    this.state = 'leader';
    this.termChanges += 1;
    this.emit('acquired', term);
  }

  private lose(reason: string): void {
    const term = this.term;
    this.term = null;
    this.state = this.stopped ? 'stopped' : 'standby';
    this.termChanges += 1;
    if (term) this.emit('lost', term, reason);
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

  /** Stops renewing and invalidates the term in the database (shutdown). */
  async stop(invalidate = true): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.busy.catch(() => undefined);
    const term = this.term;
    this.term = null;
    this.state = 'stopped';
    if (term && invalidate) {
      try {
        await this.store.invalidateTerm(term.supervisorKey, { holderId: term.holderId, supervisorGeneration: term.supervisorGeneration });
      } catch (error) {
        if (!(error instanceof TermLostError)) this.options.logger.warn({ supervisorKey: term.supervisorKey, err: (error as Error).message }, 'term invalidation at shutdown failed');
      }
    }
  }
}
