/** Processor of the experience reference family (runs in a worker child process). */
import { ConflictError, defineProcessor } from '../sdk/processor.ts';
import { forUpdate, num } from './domain.ts';

export default defineProcessor({
  async processScope(scopeId, ctx) {
    const item = await ctx.read.query('SELECT version FROM ref_experience_items WHERE scope_id = ?', [scopeId]);
    const state = await ctx.read.query('SELECT processed_version FROM ref_experience_state WHERE scope_id = ?', [scopeId]);
    const version = item.length > 0 ? num(item[0].version) : 0;
    const processed = state.length > 0 ? num(state[0].processed_version) : 0;
    if (version <= processed) {
      await ctx.acknowledge({ confirmClean: true }); // NOOP: nothing changed since the last refresh
      return;
    }
    await ctx.commit(
      async (tx) => {
        const rows = await ctx.query(tx, `SELECT processed_version FROM ref_experience_state WHERE scope_id = ?${forUpdate(ctx.backend)}`, [scopeId]);
        const current = rows.length > 0 ? num(rows[0].processed_version) : 0;
        if (current !== processed) throw new ConflictError(`experience ${scopeId} was refreshed concurrently`);
        if (rows.length > 0) {
          await ctx.query(tx, 'UPDATE ref_experience_state SET processed_version = ?, refreshed_at = ? WHERE scope_id = ?', [
            version,
            new Date().toISOString().replace('T', ' ').slice(0, 23),
            scopeId,
          ]);
        } else {
          await ctx.query(tx, 'INSERT INTO ref_experience_state (scope_id, processed_version, refreshed_at) VALUES (?, ?, ?)', [
            scopeId,
            version,
            new Date().toISOString().replace('T', ' ').slice(0, 23),
          ]);
        }
      },
      { acknowledge: true, confirmClean: true },
    );
  },
});
