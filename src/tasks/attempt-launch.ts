/**
 * One claimed task's attempt, from launch to the slot handed back (task-runner.ts owns the slots):
 * fail closed on an unknown handler version, take a warm process, arm the timeout, commit a
 * returned handler's success through the group commit, and on the attempt's end settle its verdict
 * (attempt-settler.ts), give the process back to the pool only after a clean, recorded end, and
 * relay the freed capacity.
 */
import { ATTR, SPANS, startSpan } from '../observability/tracing.ts';
import type { AttemptPool } from './attempt-pool.ts';
import { AttemptProcess } from './attempt-process.ts';
import type { AttemptSettler, SettlerDeps } from './attempt-settler.ts';
import type { TaskRegistry } from './registry.ts';
import { failClosed } from './runner-writes.ts';
import type { SuccessCommitter } from './success-committer.ts';
import type { ClaimedTask } from './task-store.ts';
import { setLongTimeout } from './timers.ts';

/** What an attempt needs of its runner: the settler's parts, and the slots' own. */
export interface LaunchContext extends Pick<SettlerDeps, 'tasks' | 'config' | 'logger' | 'clock' | 'track'> {
  /** The runner's worker id (logged with each attempt). */
  workerId: string;
  registry: TaskRegistry;
  pool: AttemptPool;
  settler: AttemptSettler;
  successes: SuccessCommitter;
  /** The runner's attempts by task id: an attempt holds its slot while it is here. */
  running: Map<number, AttemptProcess>;
  /** Claim what the capacity allows (the relay). */
  notify: () => void;
  stopped: () => boolean;
  /** An attempt ended with its verdict written. */
  completed: () => void;
}

export function launchAttempt(ctx: LaunchContext, task: ClaimedTask): void {
  // Fail closed before spawning anything when the handler version is unknown.
  try {
    ctx.registry.modulePath(task.taskType, task.handlerVersion);
  } catch (error) {
    void ctx.track(failClosed(ctx.tasks, ctx.logger, task, error).finally(() => ctx.notify()));
    return;
  }
  const span = startSpan(SPANS.taskAttempt, { [ATTR.taskType]: task.taskType });
  const worker = ctx.pool.take();
  const attempt = new AttemptProcess(task, worker, ctx.tasks, ctx.config, ctx.logger, ctx.clock);
  ctx.running.set(task.taskId, attempt);
  ctx.settler.launched(task.taskId);
  const timer = setLongTimeout(
    () => {
      void ctx.settler.stop(attempt, 'timeout');
    },
    ctx.settler.timeoutOf(task),
    ctx.clock,
  );
  attempt.onReturned = (m) => {
    timer.clear(); // the handler returned in time
    commitReturned(ctx, attempt, m.resultJson ?? null, m.reusable === true);
  };
  ctx.logger.info({ taskId: task.taskId, taskType: task.taskType, attempt: task.attemptCount, workerId: ctx.workerId }, 'task attempt started');
  void attempt.ended.then(() =>
    ctx.track(
      (async () => {
        timer.clear();
        const written = await ctx.settler.settle(attempt, ctx.stopped()).finally(() => span.end(attempt.status));
        if (written) ctx.completed();
        ctx.pool.release(worker, attempt.finishedClean && written);
        ctx.running.delete(task.taskId);
        ctx.settler.forget(task.taskId);
        ctx.notify(); // relay: a finished task hands its capacity to the next pending one
      })(),
    ),
  );
}

/**
 * The handler returned without ctx.onComplete writes: its success joins the group commit. After
 * a timeout or a lost lease nothing is committed (the stop's verdict stands); after a shutdown
 * it is (the handler finished its work). Written: the process goes back to the pool. Refused
 * (a cancel recorded first, a lost lease) or not recorded: the process is retired and, once it
 * exited, the attempt is ended with that verdict like any other (settle).
 */
function commitReturned(ctx: LaunchContext, attempt: AttemptProcess, resultJson: string | null, reusable: boolean): void {
  if (attempt.stopReason === 'timeout' || attempt.stopReason === 'lost') return;
  const { task } = attempt;
  attempt.success = ctx.successes.commit({ taskId: task.taskId, attemptToken: task.attemptToken, resultJson });
  void attempt.success.then((verdict) => {
    attempt.successVerdict = verdict;
    if (verdict === 'succeeded' && reusable && attempt.finishClean()) return;
    void attempt.retire();
  });
}
