/**
 * The task worker's readiness fact (ADR: the worker's reconciler publishes one short-TTL
 * readiness fact): published every TTL/3 while the reconciler is sweeping, withheld when no
 * sweep succeeded for two sweep periods (plus a second; it then expires with its TTL), withdrawn
 * on a clean stop.
 */
import type { Logger } from '../logging.ts';
import { systemClock, type Clock, type ClockTimer } from '../runtime/clock.ts';
import type { TaskConfig } from './config.ts';
import type { RunnerStats } from './runner-stats.ts';
import type { TaskStore } from './task-store.ts';

export class ReadinessPublisher {
  private timer: ClockTimer | null = null;
  private startedAt = 0;
  private withheld = false;

  constructor(
    private readonly tasks: TaskStore,
    private readonly workerId: string,
    private readonly config: TaskConfig,
    private readonly stats: RunnerStats,
    private readonly logger: Logger,
    private readonly track: <T>(p: Promise<T>) => Promise<T>,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Healthy while a sweep succeeded within two sweep periods; until the first one, counted from the start. */
  healthy(now = this.clock.now()): boolean {
    return now - (this.stats.lastSweepOkAt ?? this.startedAt) <= 2 * this.config.sweepMs + 1000;
  }

  async start(): Promise<void> {
    this.startedAt = this.clock.now();
    await this.publish();
    this.timer = this.clock.setInterval(
      () => {
        void this.publish();
      },
      Math.max(500, Math.floor(this.config.readinessTtlMs / 3)),
    );
  }

  async publish(): Promise<void> {
    if (!this.healthy()) {
      if (!this.withheld)
        this.logger.warn(
          { workerId: this.workerId, lastSweepOkAt: this.stats.lastSweepOkAt },
          'task reconciler has not swept successfully for two sweep periods; readiness withheld',
        );
      this.withheld = true;
      return;
    }
    this.withheld = false;
    try {
      await this.track(this.tasks.publishReadiness(this.workerId, this.config.readinessTtlMs));
    } catch (error) {
      this.logger.warn({ workerId: this.workerId, err: (error as Error).message }, 'task readiness publication failed');
    }
  }

  stopTimer(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  async withdraw(): Promise<void> {
    try {
      await this.tasks.withdrawReadiness(this.workerId);
    } catch (error) {
      this.logger.warn({ workerId: this.workerId, err: (error as Error).message }, 'task readiness withdrawal failed; it expires with its TTL');
    }
  }
}
