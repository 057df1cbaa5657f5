/**
 * The claims a group commit of successes makes in its own transaction (task-runner.ts): one per
 * attempt whose process reported itself reusable, so a finished attempt's slot and process pass
 * to the next task without a claim of their own. The claimed tasks hold their slots (reserved)
 * and start on the next turn of the event loop, once the finished attempts gave their processes
 * back; a claim that will not start goes back to pending at once (runner-writes.ts).
 */
import type { Logger } from '../logging.ts';
import type { AttemptProcess } from './attempt-process.ts';
import type { TaskConfig } from './config.ts';
import type { TaskRegistry } from './registry.ts';
import { giveBackClaim } from './runner-writes.ts';
import { MAX_CLAIM_BATCH, type ClaimedTask, type SuccessItem, type SuccessOutcome, type TaskStore } from './task-store.ts';

export interface SuccessClaimsDeps {
  tasks: TaskStore;
  registry: TaskRegistry;
  config: TaskConfig;
  logger: Logger;
  workerId: string;
  /** The runner's attempts by task id (their processes' reports say whether they are reusable). */
  running: Map<number, AttemptProcess>;
  stopped: () => boolean;
  /** Starts a claimed task's attempt. */
  launch: (task: ClaimedTask) => void;
  track: <T>(p: Promise<T>) => Promise<T>;
}

export class SuccessClaims {
  /** Tasks claimed with successes that are not launched yet (they hold their slots). */
  reserved = 0;
  /** Tasks claimed in the same transaction as a group of successes (tests, metrics). */
  claimed = 0;
  /** Test hook: runs before each group commit (tests hold it past a lease, or cancel meanwhile). */
  beforeCommit: ((items: SuccessItem[]) => Promise<void>) | null = null;

  constructor(private readonly deps: SuccessClaimsDeps) {}

  /** One group commit: the successes, and the claims for the processes they free. */
  async commit(items: SuccessItem[]): Promise<SuccessOutcome[]> {
    const { tasks, running, stopped } = this.deps;
    const reusable = (i: SuccessItem) => running.get(i.taskId)?.reported?.reusable === true;
    const freed = stopped() ? 0 : items.filter(reusable).length;
    await this.beforeCommit?.(items);
    const { outcomes, claimed } = await tasks.succeedBatch(items, {
      workerId: this.deps.workerId,
      leaseMs: this.deps.config.leaseMs,
      taskTypes: this.deps.registry.types_(),
      maxCount: Math.min(freed, MAX_CLAIM_BATCH),
    });
    if (claimed.length === 0) return outcomes;
    // A refused item keeps its slot until its process exited and the attempt was ended: the
    // claims made for it go back to pending at once (they never started).
    const room = stopped() ? 0 : items.filter((i, n) => outcomes[n] === 'succeeded' && reusable(i)).length;
    const launch = claimed.slice(0, room);
    for (const task of claimed.slice(room)) this.giveBack(task);
    this.claimed += launch.length;
    this.reserved += launch.length;
    setImmediate(() => {
      this.reserved -= launch.length;
      for (const task of launch) {
        if (stopped()) this.giveBack(task);
        else this.deps.launch(task);
      }
    });
    return outcomes;
  }

  /** A claimed task that will not start here goes back to pending. */
  giveBack(task: ClaimedTask): void {
    const { tasks, config, logger } = this.deps;
    void this.deps.track(giveBackClaim(tasks, config, logger, task));
  }
}
