/**
 * Group commit of acknowledgements the supervisor makes on behalf of its workers.
 *
 * A processor that acknowledges without business writes (`ctx.acknowledge()`: a NOOP, a candidate
 * awaiting review) does not commit in the worker: its result message carries the request, and the
 * supervisor commits it here, fenced by the same term the invocation ran under. Every request
 * that arrives within one turn of the event loop (up to `maxBatch`, per binding) shares one transaction of
 * `pc_aps_acknowledge_batch` (one call, one commit), so N workers finishing together cost one commit instead of N and,
 * on SQLite, the workers of a no-op family never take the write lock.
 *
 * The guarantees are those of a single acknowledgement: nothing is reported done before its
 * transaction committed (the caller waits for the committed row); a lost term rejects the whole
 * batch with TermLostError; any other error rolls the batch back and each request is retried in
 * its own transaction, so one bad key cannot fail the others.
 */
import { TermLostError } from '../store/errors.ts';
import type { AckRequest, AckResult, Store, Term } from '../store/types.ts';

interface Pending {
  request: AckRequest;
  resolve: (result: AckResult) => void;
  reject: (error: unknown) => void;
}

interface Batch {
  term: Term;
  bindingName: string;
  items: Pending[];
}

export interface AckBatcherStats {
  /** Acknowledgements committed through the batcher. */
  acknowledgements: number;
  /** Transactions used for them (batches plus individual retries). */
  transactions: number;
}

export class AckBatcher {
  private readonly batches = new Map<string, Batch>();
  private scheduled = false;
  readonly stats: AckBatcherStats = { acknowledgements: 0, transactions: 0 };

  constructor(private readonly store: Store, private readonly maxBatch = 500) {}

  /** Resolves with the row the committed acknowledgement left; rejects with TermLostError when the term is gone. */
  acknowledge(term: Term, request: AckRequest): Promise<AckResult> {
    return new Promise<AckResult>((resolve, reject) => {
      const key = `${term.supervisorKey}\u0000${term.holderId}\u0000${term.supervisorGeneration}\u0000${request.bindingName}`;
      let batch = this.batches.get(key);
      if (!batch) {
        batch = { term, bindingName: request.bindingName, items: [] };
        this.batches.set(key, batch);
      }
      batch.items.push({ request, resolve, reject });
      if (batch.items.length >= this.maxBatch) {
        this.batches.delete(key);
        void this.commit(batch);
      } else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batches = [...this.batches.values()];
    this.batches.clear();
    for (const batch of batches) void this.commit(batch);
  }

  private async commit(batch: Batch): Promise<void> {
    const { term, items } = batch;
    let results: AckResult[];
    try {
      this.stats.transactions += 1;
      results = items.length === 1
        ? [await this.store.acknowledge(term, items[0].request)]
        : await this.store.acknowledgeBatch(term, batch.bindingName, items.map((item) => item.request));
    } catch (error) {
      if (error instanceof TermLostError || items.length === 1) {
        for (const item of items) item.reject(error);
        return;
      }
      // Isolate the failing request: every other one commits on its own.
      await Promise.all(items.map(async (item) => {
        try {
          this.stats.transactions += 1;
          const result = await this.store.acknowledge(term, item.request);
          this.stats.acknowledgements += 1;
          item.resolve(result);
        } catch (single) {
          item.reject(single);
        }
      }));
      return;
    }
    this.stats.acknowledgements += items.length;
    items.forEach((item, i) => item.resolve(results[i]));
  }
}

const batchers = new WeakMap<Store, AckBatcher>();

/** The supervisor-side batcher of a store (one per store, shared by its partitions). */
export function ackBatcherFor(store: Store): AckBatcher {
  let batcher = batchers.get(store);
  if (!batcher) {
    batcher = new AckBatcher(store);
    batchers.set(store, batcher);
  }
  return batcher;
}
