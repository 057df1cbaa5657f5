/**
 * Durable task handler of the chaos suite ("ch-task"): writes fenced domain rows, every one
 * through ctx.commit (the attempt's token and unexpired lease checked before and after, issue #10
 * item 5). Its first commit takes the task's domain row for this attempt and drops the items an
 * earlier attempt of the task left (a requeued attempt starts over); then one commit per item;
 * the domain row turns 'done' with the task's success (onComplete). No check of its own: the
 * fence of ctx.commit is the only thing between a stale attempt and the rows. Each write also appends a
 * row to ch_task_log, in the same transaction, next to the trigger-kept history of the task row:
 * the checker orders both by id (the task row's lock orders them) to find late writes.
 * Payload: { steps, delayMs }.
 */
import { defineTaskHandler, type TaskContext } from '../src/tasks/handler.ts';
import type { Tx } from '../src/store/scoped-tx.ts';
import { utcNowExpr } from './schema.ts';

interface Payload {
  steps: number;
  delayMs: number;
}

async function log(ctx: TaskContext, tx: Tx, what: string): Promise<void> {
  await ctx.query(
    tx,
    `INSERT INTO ch_task_log (task_id, kind, attempt_token, state, lease_expires_at, at)
    VALUES (?, ?, ?, NULL, NULL, ${utcNowExpr(ctx.backend)})`,
    [ctx.taskId, what, ctx.attemptToken],
  );
}

export default defineTaskHandler({
  async run(raw, ctx) {
    const p = raw as Payload;
    await ctx.commit(async (tx) => {
      await ctx.query(tx, 'DELETE FROM ch_task_items WHERE task_id = ? AND attempt_token <> ?', [ctx.taskId, ctx.attemptToken]);
      await ctx.query(tx, 'DELETE FROM ch_task_domain WHERE task_id = ?', [ctx.taskId]);
      await ctx.query(tx, "INSERT INTO ch_task_domain (task_id, attempt_token, state) VALUES (?, ?, 'running')", [ctx.taskId, ctx.attemptToken]);
      await log(ctx, tx, 'take');
    });
    for (let item = 1; item <= p.steps; item += 1) {
      await new Promise((r) => setTimeout(r, p.delayMs));
      await ctx.commit(async (tx) => {
        await ctx.query(tx, 'INSERT INTO ch_task_items (task_id, item, attempt_token) VALUES (?, ?, ?)', [ctx.taskId, item, ctx.attemptToken]);
        await log(ctx, tx, 'item');
      });
    }
    ctx.onComplete(async (tx) => {
      await ctx.query(tx, "UPDATE ch_task_domain SET state = 'done' WHERE task_id = ? AND attempt_token = ?", [ctx.taskId, ctx.attemptToken]);
      await log(ctx, tx, 'done');
    });
    return { items: p.steps };
  },
  async failureHook(tx, task, { query }) {
    await query(tx, "UPDATE ch_task_domain SET state = 'failed' WHERE task_id = ?", [task.taskId]);
  },
});
