/**
 * The runner's group commit of the successes its worker processes report (attempts without
 * ctx.onComplete writes): a success that arrives while a batch is being committed waits for the
 * next one, which takes every success waiting (pc_task_succeed_batch, one transaction, one call;
 * the runner claims the tasks that take their places in the same call).
 * The database decides each item by pc_task_complete's rules; a refused item comes back with its
 * reason. A batch that fails as a whole (a deadlock, a result too large for the packet or the
 * column, a lost connection: nothing was written) is committed item by item (`commitOne`), so
 * one bad item fails only itself; an item that fails alone too ends with 'error'. A batch holds
 * at most maxBytes of results (an item larger than that goes alone).
 */
import type { Logger } from '../logging.ts';
import { MAX_SUCCESS_BATCH, type SuccessItem, type SuccessOutcome } from './task-store.ts';

/** What became of a reported success: written, refused (why), or not recorded ('error'). */
export type SuccessVerdict = SuccessOutcome | 'error';

interface Waiting {
  item: SuccessItem;
  resolve: (verdict: SuccessVerdict) => void;
}

/** Result text of one batch: well inside MySQL's default 16 MiB max_allowed_packet. */
const MAX_BATCH_BYTES = 4_000_000;

export class SuccessCommitter {
  private waiting: Waiting[] = [];
  /** A drain is scheduled or running (it takes every success reported meanwhile). */
  private busy = false;
  private idleWaiters: Array<() => void> = [];
  /** Batches sent and items in them (metrics, tests). */
  batches = 0;
  items = 0;

  private readonly maxBatch: number;
  private readonly maxBytes: number;

  constructor(
    private readonly commitBatch: (items: SuccessItem[]) => Promise<SuccessOutcome[]>,
    private readonly commitOne: (item: SuccessItem) => Promise<SuccessOutcome>,
    private readonly logger: Logger,
    options: { maxBatch?: number; maxBytes?: number } = {},
  ) {
    this.maxBatch = options.maxBatch ?? MAX_SUCCESS_BATCH;
    this.maxBytes = options.maxBytes ?? MAX_BATCH_BYTES;
  }

  /** Successes waiting for the next batch. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** Resolves when no success waits and no batch is in flight. */
  idle(): Promise<void> {
    if (!this.busy && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Resolves once the success is written or refused; never rejects. The first batch starts on
   * the next turn of the event loop, so the successes reported in this one join it: on SQLite a
   * commit runs synchronously, and started at once it would hold one success alone each time.
   */
  commit(item: SuccessItem): Promise<SuccessVerdict> {
    return new Promise((resolve) => {
      this.waiting.push({ item, resolve });
      if (!this.busy) {
        this.busy = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) {
        const batch = this.take();
        this.batches += 1;
        this.items += batch.length;
        let outcomes: SuccessOutcome[];
        try {
          outcomes = await this.commitBatch(batch.map((w) => w.item));
        } catch (error) {
          this.logger.warn({ items: batch.length, err: (error as Error).message }, 'committing task successes failed');
          for (const w of batch) w.resolve(await this.one(w.item));
          continue;
        }
        for (const [i, w] of batch.entries()) w.resolve(outcomes[i]!);
      }
    } finally {
      this.busy = false;
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async one(item: SuccessItem): Promise<SuccessVerdict> {
    try {
      return await this.commitOne(item);
    } catch (error) {
      this.logger.warn({ taskId: item.taskId, err: (error as Error).message }, 'committing a task success failed');
      return 'error';
    }
  }

  /**
   * The next batch: at most maxBatch items and maxBytes of results (at least one item), one item
   * per task (a second one waits), rows locked in task id order.
   */
  private take(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const ids = new Set<number>();
    let bytes = 0;
    for (const w of this.waiting) {
      const size = w.item.resultJson === null ? 0 : Buffer.byteLength(w.item.resultJson);
      const fits = batch.length === 0 || (batch.length < this.maxBatch && bytes + size <= this.maxBytes);
      if (fits && !ids.has(w.item.taskId)) {
        ids.add(w.item.taskId);
        bytes += size;
        batch.push(w);
      } else rest.push(w);
    }
    this.waiting = rest;
    return batch.sort((a, b) => a.item.taskId - b.item.taskId);
  }
}
