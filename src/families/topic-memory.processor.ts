/** Processor of the topic-memory reference family (runs in a worker child process). */
import { ConflictError, defineProcessor } from '../sdk/processor.ts';
import { forUpdate, num, writeCursor } from './domain.ts';
import { TOPIC_WINDOW } from './topic-memory.ts';

export class PoisonedSourceError extends Error {
  constructor(scopeId: string, seq: number) {
    super(`source ${seq} of ${scopeId} cannot be processed; the scope stays at its cursor`);
    this.name = 'PoisonedSourceError';
  }
}

export default defineProcessor({
  async processScope(scopeId, ctx) {
    // Read and compute outside the transaction.
    const cursorRows = await ctx.read.query('SELECT through_seq FROM ref_topic_cursors WHERE scope_id = ?', [scopeId]);
    const cursor = cursorRows.length > 0 ? num(cursorRows[0].through_seq) : 0;
    const items = await ctx.read.query('SELECT seq, words, poison FROM ref_topic_sources WHERE scope_id = ? AND seq > ? ORDER BY seq LIMIT ?', [
      scopeId,
      cursor,
      TOPIC_WINDOW + 1,
    ]);
    const window = items.slice(0, TOPIC_WINDOW);
    const poisoned = window.find((i) => num(i.poison) === 1);
    if (poisoned) throw new PoisonedSourceError(scopeId, num(poisoned.seq));
    const reachedEnd = items.length <= TOPIC_WINDOW;
    if (window.length === 0) {
      await ctx.acknowledge({ confirmClean: true });
      return;
    }
    const through = num(window[window.length - 1].seq);
    const words = window.reduce((sum, i) => sum + num(i.words), 0);
    // Commit: term asserted first, cursor CAS, digest, acknowledgement, in one short transaction.
    await ctx.commit(
      async (tx) => {
        const rows = await ctx.query(tx, `SELECT through_seq FROM ref_topic_cursors WHERE scope_id = ?${forUpdate(ctx.backend)}`, [scopeId]);
        const current = rows.length > 0 ? num(rows[0].through_seq) : 0;
        if (current !== cursor) throw new ConflictError(`cursor of ${scopeId} moved from ${cursor} to ${current}`);
        await ctx.query(tx, 'INSERT INTO ref_topic_digests (scope_id, through_seq, from_seq, words) VALUES (?, ?, ?, ?)', [
          scopeId,
          through,
          cursor + 1,
          words,
        ]);
        await writeCursor(tx, 'ref_topic_cursors', scopeId, through, rows.length > 0);
        return reachedEnd;
      },
      { acknowledge: true, confirmClean: (end) => end },
    );
  },
});
