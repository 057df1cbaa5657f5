/**
 * One logical supervisor: one lease key, one term keeper, one loop, one scheduling partition per
 * family it owns (global: every family; dedicated: one). The loop wakes on notifications, worker
 * exits and deadlines (and, on MySQL/OceanBase only, a discovery poll); it starts the examination
 * of every family that can proceed, side by side, so one family never delays another.
 */
import type { Logger } from '../logging.ts';
import { TermLostError } from '../store/errors.ts';
import type { Store, Term } from '../store/types.ts';
import type { FamilyPartition } from './family-partition.ts';
import { TermKeeper } from './term-keeper.ts';
import { MAX_TIMER_MS, systemClock, type Clock, type ClockTimer } from './clock.ts';

export interface SupervisorOptions {
  supervisorKey: string;
  holderId: string;
  ttlMs: number;
  renewEveryMs: number;
  pollEveryMs: number;
  logger: Logger;
  /** Local time and timers (default: the system clock). */
  clock?: Clock;
}

export class Supervisor {
  readonly supervisorKey: string;
  readonly keeper: TermKeeper;
  partitions: FamilyPartition[] = [];
  private scheduled = false;
  private ticking: Promise<void> | null = null;
  private again = false;
  private timer: ClockTimer | null = null;
  private pollTimer: ClockTimer | null = null;
  private retryTimer: ClockTimer | null = null;
  private readonly clock: Clock;
  private rotation = 0;
  /** Examinations in flight, by family partition. */
  private readonly examining = new Map<FamilyPartition, Promise<void>>();
  /** Partitions a round skipped while they were being examined: examined again when that ends. */
  private readonly rewake = new Set<FamilyPartition>();
  private stopped = false;
  ticks = 0;

  constructor(
    private readonly store: Store,
    private readonly options: SupervisorOptions,
  ) {
    this.supervisorKey = options.supervisorKey;
    this.clock = options.clock ?? systemClock;
    this.keeper = new TermKeeper(store, {
      supervisorKey: options.supervisorKey,
      holderId: options.holderId,
      ttlMs: options.ttlMs,
      renewEveryMs: options.renewEveryMs,
      logger: options.logger,
      clock: this.clock,
    });
    // The keeper logs every lease event (lease-events.ts); the supervisor only acts on them.
    this.keeper.on('acquired', () => {
      for (const p of this.partitions) p.resetForNewTerm();
      this.wake();
    });
    this.keeper.on('lost', () => {
      void this.terminateWorkers();
    });
    // RFC 8: a failed renewal stops dispatch at once (tick checks keeper.suspended); only a good
    // renewal of the same term resumes it.
    this.keeper.on('resumed', () => this.wake());
  }

  get term(): Term | null {
    return this.keeper.term;
  }

  /** The term new invocations may start under: none while suspended (RFC 8) or stopped. */
  get dispatchTerm(): Term | null {
    return this.stopped || this.keeper.suspended ? null : this.keeper.term;
  }

  /** No examination round is running or scheduled (tests wait for this instead of sleeping). */
  get idle(): boolean {
    return !this.scheduled && this.ticking === null && !this.again && this.examining.size === 0;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.keeper.start();
    if (this.store.backend !== 'sqlite') {
      this.pollTimer = this.clock.setInterval(() => {
        if (!this.keeper.term) return;
        for (const p of this.partitions) p.poll();
        this.wake();
      }, this.options.pollEveryMs);
    }
    this.wake();
  }

  /** Asks for an examination round soon; several wakes merge into one round. */
  wake(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.ticking = this.tick().finally(() => {
        this.ticking = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
    });
  }

  private async tick(): Promise<void> {
    const term = this.keeper.term;
    if (!term || this.stopped || this.keeper.suspended) return;
    this.ticks += 1;
    const n = this.partitions.length;
    const start = this.rotation++ % Math.max(1, n);
    for (let i = 0; i < n; i += 1) {
      if (this.stopped || this.keeper.term !== term || this.keeper.suspended) break;
      const partition = this.partitions[(start + i) % n];
      // Examinations run side by side: one that waits (a statement waiting for the SQLite write
      // lock, a slow page) never holds up another family (RFC 1, 2). A family still being
      // examined is looked at again when its examination ends.
      if (this.examining.has(partition)) {
        this.rewake.add(partition);
        continue;
      }
      if (partition.wantsExamination(this.clock.now())) this.examine(partition, term);
    }
    this.armTimer();
  }

  private examine(partition: FamilyPartition, term: Term): void {
    this.examining.set(
      partition,
      partition
        .examine(term)
        .catch((error: unknown) => {
          if (error instanceof TermLostError) {
            this.termLost(term);
            return;
          }
          partition.examinationFailed((error as Error).message);
          this.options.logger.error(
            {
              supervisorKey: term.supervisorKey,
              binding: partition.bindingName,
              family: partition.family,
              stage: 'examine',
              errorType: (error as Error).name,
              err: (error as Error).message,
            },
            'family examination failed; other families continue',
          );
          this.retrySoon();
        })
        .finally(() => {
          this.examining.delete(partition);
          this.armTimer();
          if (this.rewake.delete(partition)) this.wake();
        }),
    );
  }

  /**
   * A failed examination (e.g. a transient database error) may have left ready work
   * undispatched and nothing else may wake this loop (SQLite does not poll): look again soon.
   */
  private retrySoon(): void {
    if (this.retryTimer || this.stopped) return;
    this.retryTimer = this.clock.setTimeout(
      () => {
        this.retryTimer = null;
        this.wake();
      },
      Math.min(1000, this.options.pollEveryMs),
    );
  }

  private armTimer(): void {
    this.timer?.cancel();
    this.timer = null;
    const next = this.partitions.map((p) => p.nextWakeAt()).filter((t): t is number => t !== null);
    if (next.length === 0) return;
    const delay = Math.max(0, Math.min(...next) - this.clock.now()) + 5;
    this.timer = this.clock.setTimeout(() => this.wake(), Math.min(delay, MAX_TIMER_MS));
  }

  termLost(term: Term): void {
    this.keeper.reportLost(term);
  }

  private async terminateWorkers(): Promise<void> {
    // Best effort: the database fencing already rejects every commit of the old term.
    await Promise.all(this.partitions.map((p) => p.terminateRunning().catch(() => undefined)));
  }

  /** Shutdown: stop discovery and dispatch, finite cleanup of workers, invalidate the term. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.pollTimer?.cancel();
    this.retryTimer?.cancel();
    await this.ticking?.catch(() => undefined);
    await Promise.all(this.examining.values());
    await Promise.all(this.partitions.map((p) => p.close()));
    await this.keeper.stop(true);
  }
}
