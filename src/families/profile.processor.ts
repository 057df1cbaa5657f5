/** Processor of the profile reference family (runs in a worker child process). */
import { toDbTime } from '../store/rows.ts';
import { ConflictError, defineProcessor } from '../sdk/processor.ts';
import { forUpdate, num, writeCursor } from './domain.ts';

export default defineProcessor({
  async processScope(scopeId, ctx) {
    // The fire this invocation belongs to: the checkpoint of the admitted cron fire, or the
    // explicit request's generation when no scheduled check ran yet.
    const state = await ctx.readBindingState();
    const fireKey = state.lastScheduleCheckpointAt ? toDbTime(state.lastScheduleCheckpointAt) : `request-${ctx.claimedRequestGeneration}`;
    const cursorRows = await ctx.read.query('SELECT through_seq FROM ref_profile_cursors WHERE scope_id = ?', [scopeId]);
    const cursor = cursorRows.length > 0 ? num(cursorRows[0].through_seq) : 0;
    const latest = await ctx.read.query('SELECT MAX(seq) AS m FROM ref_profile_signals WHERE scope_id = ?', [scopeId]);
    const through = num(latest[0]?.m);
    if (through <= cursor) {
      await ctx.acknowledge({ confirmClean: true });
      return;
    }
    await ctx.commit(
      async (tx) => {
        const rows = await ctx.query(tx, `SELECT through_seq FROM ref_profile_cursors WHERE scope_id = ?${forUpdate(ctx.backend)}`, [scopeId]);
        const current = rows.length > 0 ? num(rows[0].through_seq) : 0;
        if (current !== cursor) throw new ConflictError(`profile cursor of ${scopeId} moved`);
        const existing = await ctx.query(tx, 'SELECT through_seq FROM ref_profile_candidates WHERE scope_id = ? AND fire_at = ?', [scopeId, fireKey]);
        if (existing.length > 0) return false; // this fire already produced its candidate: newer signals wait for the next fire
        // At most one candidate per fire; it waits for review.
        await ctx.query(tx, "INSERT INTO ref_profile_candidates (scope_id, fire_at, through_seq, status) VALUES (?, ?, ?, 'pending_review')", [
          scopeId,
          fireKey,
          through,
        ]);
        await writeCursor(tx, 'ref_profile_cursors', scopeId, through, rows.length > 0);
        return true;
      },
      { acknowledge: true, confirmClean: (produced) => produced },
    );
  },
});
