/**
 * Coalescing of calls made within one turn of the event loop: requests added under the same key
 * before the turn ends (or until `maxBatch` gather) are handed to `run` together, which settles
 * each of them. The supervisor's group commit of acknowledgements (ack-batcher.ts) and its
 * batched start-snapshot reads (intent-reader.ts) are built on it; one instance of each per
 * store (perStore).
 *
 * With `maxInFlight`, at most that many runs of one key are under way at once: requests arriving
 * meanwhile wait for a run of their key to end and then go together (group commit: the longer a
 * commit takes, the more the next one carries), instead of one call each.
 */
export interface Pending<Req, Res> {
  request: Req;
  resolve: (result: Res) => void;
  reject: (error: unknown) => void;
}

export interface TurnBatchStats {
  /** Runs started. */
  runs: number;
  /** Requests handed to runs. */
  requests: number;
}

export class TurnBatch<Ctx, Req, Res> {
  private readonly groups = new Map<string, { context: Ctx; items: Pending<Req, Res>[] }>();
  private readonly running = new Map<string, number>();
  private scheduled = false;
  readonly stats: TurnBatchStats = { runs: 0, requests: 0 };

  /**
   * @param defer       when the turn ends: setImmediate (requests arriving as separate I/O events,
   *                    e.g. worker results) or queueMicrotask (requests made by one synchronous loop)
   * @param run         settles every item of one group (its context is the first request's)
   * @param maxInFlight runs of one key at once (default: no limit)
   */
  constructor(
    private readonly defer: (flush: () => void) => void,
    private readonly maxBatch: number,
    private readonly run: (context: Ctx, items: Pending<Req, Res>[]) => Promise<void>,
    private readonly maxInFlight = Infinity,
  ) {}

  add(key: string, context: Ctx, request: Req): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      let group = this.groups.get(key);
      if (!group) {
        group = { context, items: [] };
        this.groups.set(key, group);
      }
      group.items.push({ request, resolve, reject });
      if (group.items.length >= this.maxBatch && this.mayStart(key)) this.startGroup(key);
      else this.schedule();
    });
  }

  private mayStart(key: string): boolean {
    return (this.running.get(key) ?? 0) < this.maxInFlight;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.defer(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    // A key at its in-flight limit keeps its requests until one of its runs ends.
    for (const key of [...this.groups.keys()]) if (this.mayStart(key)) this.startGroup(key);
  }

  /** Starts one run with at most maxBatch of the key's waiting requests. */
  private startGroup(key: string): void {
    const group = this.groups.get(key)!;
    const items = group.items.length > this.maxBatch ? group.items.splice(0, this.maxBatch) : group.items;
    if (items === group.items) this.groups.delete(key);
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
    this.stats.runs += 1;
    this.stats.requests += items.length;
    this.run(group.context, items)
      .catch((error: unknown) => {
        for (const item of items) item.reject(error);
      })
      .finally(() => {
        const left = (this.running.get(key) ?? 1) - 1;
        if (left === 0) this.running.delete(key);
        else this.running.set(key, left);
        if (this.groups.has(key)) this.schedule();
      });
  }
}

/** One instance per store, made on first use (the store's own batchers, shared by its partitions). */
export function perStore<S extends object, T>(make: (store: S) => T): (store: S) => T {
  const instances = new WeakMap<S, T>();
  return (store) => {
    let instance = instances.get(store);
    if (!instance) {
      instance = make(store);
      instances.set(store, instance);
    }
    return instance;
  };
}
