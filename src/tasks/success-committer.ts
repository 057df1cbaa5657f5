/**
 * The runner's group commit of the successes its worker processes report (attempts without
 * ctx.onComplete writes): a success that arrives while a batch is being committed waits for the
 * next one, which takes every success waiting (pc_task_succeed_batch, one transaction, one call;
 * the runner claims the tasks that take their places in the same call).
 * The database decides each item by pc_task_complete's rules; a refused item comes back with its
 * reason. A batch that fails as a whole (a deadlock, a busy database, a lost connection: nothing
 * was written) is tried once more, then its items end with 'error'.
 */
import type { Logger } from '../logging.ts';
import { MAX_SUCCESS_BATCH, type SuccessItem, type SuccessOutcome } from './task-store.ts';

/** What became of a reported success: written, refused (why), or not recorded ('error'). */
export type SuccessVerdict = SuccessOutcome | 'error';

interface Waiting {
  item: SuccessItem;
  tries: number;
  resolve: (verdict: SuccessVerdict) => void;
}

const TRIES = 2;

export class SuccessCommitter {
  private waiting: Waiting[] = [];
  private busy = false;
  private idleWaiters: Array<() => void> = [];
  /** Batches sent and items in them (metrics, tests). */
  batches = 0;
  items = 0;

  constructor(
    private readonly commitBatch: (items: SuccessItem[]) => Promise<SuccessOutcome[]>,
    private readonly logger: Logger,
    private readonly maxBatch = MAX_SUCCESS_BATCH,
  ) {}

  /** Resolves when no success waits and no batch is in flight. */
  idle(): Promise<void> {
    if (!this.busy && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves once the success is written or refused; never rejects. */
  commit(item: SuccessItem): Promise<SuccessVerdict> {
    return new Promise((resolve) => {
      this.waiting.push({ item, tries: 0, resolve });
      if (!this.busy) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.busy = true;
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
          const again = batch.filter((w) => {
            w.tries += 1;
            if (w.tries < TRIES) return true;
            w.resolve('error');
            return false;
          });
          this.waiting.unshift(...again);
          continue;
        }
        for (const [i, w] of batch.entries()) w.resolve(outcomes[i]!);
      }
    } finally {
      this.busy = false;
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** The next batch: at most maxBatch, one item per task (a second one waits), rows locked in task id order. */
  private take(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const ids = new Set<number>();
    for (const w of this.waiting) {
      if (batch.length < this.maxBatch && !ids.has(w.item.taskId)) {
        ids.add(w.item.taskId);
        batch.push(w);
      } else rest.push(w);
    }
    this.waiting = rest;
    return batch.sort((a, b) => a.item.taskId - b.item.taskId);
  }
}
