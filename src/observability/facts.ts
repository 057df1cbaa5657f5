/**
 * Persisted facts the observability endpoint reads from the database, bounded and cached briefly
 * so that frequent scrapes never turn into unbounded or repeated scans: owed (unconfirmed)
 * requests per family (counted through listOwedRequests pages up to a cap), the leases of the
 * mode's supervisor keys (is a background leader alive?) and durable task worker readiness.
 * The cache ages on the runtime's clock (tests drive it).
 */
import type { Runtime } from '../runtime/runtime.ts';
import { BaseStore } from '../store/base-store.ts';
import { TaskStore } from '../tasks/task-store.ts';

export interface OwedCount {
  /** Owed requests counted, at most `cap`. */
  owed: number;
  /** True when counting stopped at the cap (there may be more). */
  capped: boolean;
}

export interface LeaderFact {
  supervisorKey: string;
  live: boolean;
}

export interface FactOptions {
  /** Largest number of owed requests counted per family (default 5000). */
  owedCap?: number;
  /** Page size of the count (default 1000; the operation accepts 1..5000). */
  owedPageSize?: number;
  /** How long a read is reused (default 1000 ms). */
  cacheMs?: number;
}

export async function countOwedRequests(runtime: Runtime, bindingName: string, cap: number, pageSize: number): Promise<OwedCount> {
  let owed = 0;
  let after = 0;
  for (;;) {
    const limit = Math.max(1, Math.min(pageSize, cap - owed + 1, 5000));
    const page = await runtime.store.listOwedRequests(bindingName, after, limit);
    owed += page.keys.length;
    if (owed > cap) return { owed: cap, capped: true };
    if (page.exhausted || page.keys.length === 0) return { owed, capped: false };
    after = page.nextAfterSequence;
  }
}

export class PersistedFacts {
  private readonly cap: number;
  private readonly pageSize: number;
  private readonly cacheMs: number;
  private owedCache: { at: number; value: Promise<Map<string, OwedCount>> } | null = null;
  private leaseCache: { at: number; value: Promise<LeaderFact[]> } | null = null;
  private readonly tasks: TaskStore | null;
  private taskCache: { at: number; value: Promise<{ counts: Array<{ state: string; taskType: string; n: number }>; capped: boolean }> } | null = null;

  constructor(
    private readonly runtime: Runtime,
    options: FactOptions = {},
  ) {
    this.cap = options.owedCap ?? 5000;
    this.pageSize = options.owedPageSize ?? 1000;
    this.cacheMs = options.cacheMs ?? 1000;
    // Durable task readiness is a fact of the shared database (every store is a BaseStore).
    this.tasks = runtime.store instanceof BaseStore ? new TaskStore(runtime.store) : null;
  }

  get owedCap(): number {
    return this.cap;
  }

  /** Owed requests per family (bounded). */
  owed(): Promise<Map<string, OwedCount>> {
    const now = this.runtime.clock.monotonic();
    if (!this.owedCache || now - this.owedCache.at > this.cacheMs) {
      const value = (async () => {
        const out = new Map<string, OwedCount>();
        for (const f of this.runtime.config.families) {
          out.set(f.registration.family, await countOwedRequests(this.runtime, f.registration.bindingName, this.cap, this.pageSize));
        }
        return out;
      })();
      value.catch(() => {
        this.owedCache = null;
      });
      this.owedCache = { at: now, value };
    }
    return this.owedCache.value;
  }

  /** The leases of the mode's supervisor keys, as persisted: is a live holder there? */
  leaders(): Promise<LeaderFact[]> {
    const now = this.runtime.clock.monotonic();
    if (!this.leaseCache || now - this.leaseCache.at > this.cacheMs) {
      const value = this.runtime.leases().then((leases) => leases.map((l) => ({ supervisorKey: l.supervisorKey, live: l.live })));
      value.catch(() => {
        this.leaseCache = null;
      });
      this.leaseCache = { at: now, value };
    }
    return this.leaseCache.value;
  }

  /** Active tasks per state and type (bounded read, cached like the other facts). */
  activeTasks(): Promise<{ counts: Array<{ state: string; taskType: string; n: number }>; capped: boolean } | null> {
    if (!this.tasks) return Promise.resolve(null);
    const now = this.runtime.clock.monotonic();
    if (!this.taskCache || now - this.taskCache.at > this.cacheMs) {
      const value = this.tasks.countActive(this.cap * 20);
      value.catch(() => {
        this.taskCache = null;
      });
      this.taskCache = { at: now, value };
    }
    return this.taskCache.value;
  }

  async liveTaskWorkers(): Promise<number | null> {
    if (!this.tasks) return null;
    return (await this.tasks.readReadiness()).liveWorkers;
  }
}
