/**
 * Cross-process wake-ups of a task runner: one index probe for pending work (pc_task_probe_pending)
 * after a foreign commit (SQLite: the database file watch, src/runtime/sqlite-wakeup.ts, no SQL
 * while nothing is written) or every WAKEUP_POLL_MS (MySQL/OceanBase), only while the runner
 * wants work. Probes never overlap; a commit during one triggers one more.
 */
import type { Logger } from '../logging.ts';
import { systemClock, type Clock, type ClockTimer } from '../runtime/clock.ts';
import { watchSqliteCommits } from '../runtime/sqlite-wakeup.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { TaskStore } from './task-store.ts';

export type WakeupSource = 'submit' | 'commit' | 'probe' | 'notify';

export class PendingProbe {
  private probing = false;
  private reprobe = false;
  private pollTimer: ClockTimer | null = null;
  private unwatch: (() => void) | null = null;

  constructor(
    private readonly tasks: TaskStore,
    private readonly logger: Logger,
    private readonly track: <T>(p: Promise<T>) => Promise<T>,
    /** Whether the runner wants work now (free capacity, nothing being claimed). */
    private readonly wanted: () => boolean,
    private readonly onPending: (source: WakeupSource) => void,
    /** The task types this runner's registry knows (a claim takes only those). */
    private readonly taskTypes: () => readonly string[],
    private readonly clock: Clock = systemClock,
  ) {}

  start(pollMs: number): void {
    const store = this.tasks.store;
    if (store instanceof SqliteStore) {
      const db = store.db;
      if (db.name && db.name !== ':memory:') this.unwatch = watchSqliteCommits(db, db.name, () => this.probe('commit'));
    } else {
      this.pollTimer = this.clock.setInterval(() => this.probe('probe'), pollMs);
    }
  }

  stop(): void {
    this.pollTimer?.cancel();
    this.pollTimer = null;
    this.unwatch?.();
    this.unwatch = null;
  }

  probe(source: WakeupSource): void {
    if (!this.wanted()) return;
    if (this.probing) {
      this.reprobe = true; // a commit during the probe may not be in its snapshot
      return;
    }
    this.probing = true;
    void this.track(
      this.tasks
        .hasPending(this.taskTypes())
        .then(
          (pending) => {
            if (pending) this.onPending(source);
          },
          (error: unknown) => this.logger.warn({ err: (error as Error).message }, 'task wake-up probe failed; the sweep will retry'),
        )
        .finally(() => {
          this.probing = false;
          if (this.reprobe) {
            this.reprobe = false;
            this.probe(source);
          }
        }),
    );
  }
}
