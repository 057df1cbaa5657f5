/**
 * Start snapshots of the keys the supervisor dispatches in one turn, read together: every
 * readIntent requested in the same synchronous turn (one dispatch loop over the ready queue) for
 * one binding becomes one pc_aps_read_intents call instead of one pc_aps_read_intent per key
 * (on MySQL/OceanBase one round trip instead of one per dispatched key). A single key is read
 * with pc_aps_read_intent as before. The snapshot is what each key's own read would return: the
 * read happens when the key is dispatched, never earlier, so queued requests still merge into it.
 */
import type { IntentSnapshot, Store } from '../store/types.ts';

interface Waiting {
  scopeId: string;
  resolve: (snapshot: IntentSnapshot | null) => void;
  reject: (error: unknown) => void;
}

export class IntentReader {
  private readonly pending = new Map<string, Waiting[]>();
  private scheduled = false;

  constructor(private readonly store: Store, private readonly maxBatch = 500) {}

  read(bindingName: string, scopeId: string): Promise<IntentSnapshot | null> {
    return new Promise((resolve, reject) => {
      let list = this.pending.get(bindingName);
      if (!list) {
        list = [];
        this.pending.set(bindingName, list);
      }
      list.push({ scopeId, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const all = [...this.pending.entries()];
    this.pending.clear();
    for (const [bindingName, list] of all) {
      for (let i = 0; i < list.length; i += this.maxBatch) void this.readBatch(bindingName, list.slice(i, i + this.maxBatch));
    }
  }

  private async readBatch(bindingName: string, list: Waiting[]): Promise<void> {
    try {
      if (list.length === 1) {
        list[0].resolve(await this.store.readIntent(bindingName, list[0].scopeId));
        return;
      }
      const snapshots = await this.store.readIntents(bindingName, list.map((w) => w.scopeId));
      list.forEach((w, i) => w.resolve(snapshots[i]));
    } catch (error) {
      for (const w of list) w.reject(error);
    }
  }
}

const readers = new WeakMap<Store, IntentReader>();

/** The supervisor-side reader of a store (one per store, shared by its partitions). */
export function intentReaderFor(store: Store): IntentReader {
  let reader = readers.get(store);
  if (!reader) {
    reader = new IntentReader(store);
    readers.set(store, reader);
  }
  return reader;
}
