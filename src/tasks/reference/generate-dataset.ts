/**
 * Reference handler "generate-dataset" (version 1): generates items of an evaluation dataset with
 * an incremental checkpoint (generated count) fenced by the attempt. A lost or failed task fails;
 * an explicit resume creates a new task that continues from the persisted count and reuses the
 * dataset's dedupe key. Payload: { datasetId, items, itemDelayMs?, failAtItem? } (failAtItem: a
 * test hook that fails the original task, not a resume of it)
 */
import { defineTaskHandler } from '../handler.ts';

interface Payload { datasetId: string; items: number; itemDelayMs?: number; failAtItem?: number }

export default defineTaskHandler({
  async run(raw, ctx) {
    const p = raw as Payload;
    const start = await ctx.commit(async (tx) => {
      const rows = await ctx.query(tx, `SELECT generated FROM ref_datasets WHERE dataset_id = ?${ctx.backend === 'sqlite' ? '' : ' FOR UPDATE'}`, [p.datasetId]);
      if (rows.length === 0) {
        await ctx.query(tx, "INSERT INTO ref_datasets (dataset_id, target_items, generated, state, task_id, attempt_token) VALUES (?, ?, 0, 'generating', ?, ?)", [p.datasetId, p.items, ctx.taskId, ctx.attemptToken]);
        return 0;
      }
      await ctx.query(tx, "UPDATE ref_datasets SET state = 'generating', target_items = ?, task_id = ?, attempt_token = ? WHERE dataset_id = ?", [p.items, ctx.taskId, ctx.attemptToken, p.datasetId]);
      return Number(rows[0].generated);
    });
    for (let item = start + 1; item <= p.items; item += 1) {
      if (p.failAtItem === item && !ctx.resumedFromTaskId) throw new Error(`item ${item} of ${p.datasetId} could not be generated`);
      if (p.itemDelayMs) await new Promise((r) => setTimeout(r, p.itemDelayMs));
      await ctx.commit(async (tx) => {
        await ctx.query(tx, 'UPDATE ref_datasets SET generated = ? WHERE dataset_id = ? AND task_id = ? AND attempt_token = ?', [item, p.datasetId, ctx.taskId, ctx.attemptToken]);
      });
      await ctx.progress(item, p.items, item === start + 1 ? `generating from item ${item}` : null);
    }
    await ctx.commit(async (tx) => {
      await ctx.query(tx, "UPDATE ref_datasets SET state = 'completed' WHERE dataset_id = ? AND task_id = ?", [p.datasetId, ctx.taskId]);
    });
    return { datasetId: p.datasetId, generated: p.items, resumedFrom: start };
  },
  async failureHook(tx, task, { query }) {
    const p = task.payload as Payload;
    await query(tx, "UPDATE ref_datasets SET state = 'failed' WHERE dataset_id = ? AND task_id = ? AND state = 'generating'", [p.datasetId, task.taskId]);
  },
});
