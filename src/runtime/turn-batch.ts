/**
 * Coalescing of calls made within one turn of the event loop: requests added under the same key
 * before the turn ends (or until `maxBatch` gather) are handed to `run` together, which settles
 * each of them. The supervisor's group commit of acknowledgements (ack-batcher.ts) and its
 * batched start-snapshot reads (intent-reader.ts) are built on it; one instance of each per
 * store (perStore).
 */
export interface Pending<Req, Res> {
  request: Req;
  resolve: (result: Res) => void;
  reject: (error: unknown) => void;
}

export class TurnBatch<Ctx, Req, Res> {
  private readonly groups = new Map<string, { context: Ctx; items: Pending<Req, Res>[] }>();
  private scheduled = false;

  /**
   * @param defer   when the turn ends: setImmediate (requests arriving as separate I/O events,
   *                e.g. worker results) or queueMicrotask (requests made by one synchronous loop)
   * @param run     settles every item of one group (its context is the first request's)
   */
  constructor(
    private readonly defer: (flush: () => void) => void,
    private readonly maxBatch: number,
    private readonly run: (context: Ctx, items: Pending<Req, Res>[]) => Promise<void>,
  ) {}

  add(key: string, context: Ctx, request: Req): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      let group = this.groups.get(key);
      if (!group) {
        group = { context, items: [] };
        this.groups.set(key, group);
      }
      group.items.push({ request, resolve, reject });
      if (group.items.length >= this.maxBatch) {
        this.groups.delete(key);
        this.start(group.context, group.items);
      } else if (!this.scheduled) {
        this.scheduled = true;
        this.defer(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const groups = [...this.groups.values()];
    this.groups.clear();
    for (const group of groups) this.start(group.context, group.items);
  }

  private start(context: Ctx, items: Pending<Req, Res>[]): void {
    this.run(context, items).catch((error: unknown) => { for (const item of items) item.reject(error); });
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
