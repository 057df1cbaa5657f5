/**
 * Start snapshots of the keys the supervisor dispatches in one turn, read together: every
 * readIntent requested in the same turn of the event loop for one binding becomes one
 * pc_aps_read_intents call instead of one pc_aps_read_intent per key (on MySQL/OceanBase one
 * round trip instead of one per dispatched key). The turn ends with setImmediate on MySQL, so the
 * keys dispatched by worker results that arrived in the same poll phase (each frees its slot and
 * starts the next key, invocation.ts) share one read; a single key, and every key on SQLite (no
 * round trip), is read with pc_aps_read_intent. The snapshot is what each key's own read would
 * return: the read happens when the key is dispatched, never earlier, so queued requests still
 * merge into it.
 */
import type { IntentSnapshot, Store } from '../store/types.ts';
import { TurnBatch, perStore, type Pending } from './turn-batch.ts';

export class IntentReader {
  private readonly batch: TurnBatch<string, string, IntentSnapshot | null>;

  constructor(
    private readonly store: Store,
    maxBatch = 500,
  ) {
    this.batch = new TurnBatch(store.backend === 'sqlite' ? queueMicrotask : setImmediate, maxBatch, (bindingName, items) =>
      this.readBatch(bindingName, items),
    );
  }

  read(bindingName: string, scopeId: string): Promise<IntentSnapshot | null> {
    return this.batch.add(bindingName, bindingName, scopeId);
  }

  private async readBatch(bindingName: string, items: Pending<string, IntentSnapshot | null>[]): Promise<void> {
    // SQLite reads in this process (no round trip to save): one primary-key read per key costs
    // a sixth of its share of the list form (issue 12 item 3: a recursive split and six ordered
    // group_concat per call, about 30 % of the host's SQL time with 4 workers).
    if (items.length === 1 || this.store.backend === 'sqlite') {
      for (const item of items) item.resolve(await this.store.readIntent(bindingName, item.request));
      return;
    }
    const snapshots = await this.store.readIntents(
      bindingName,
      items.map((item) => item.request),
    );
    items.forEach((item, i) => item.resolve(snapshots[i]));
  }
}

/** The supervisor-side reader of a store (one per store, shared by its partitions). */
export const intentReaderFor = perStore((store: Store) => new IntentReader(store));
