/**
 * One benchmark worker process of the `fence` suite: its own connection; on 'go' it runs
 * business commits for the given duration, fenced (Store.fencedTransaction: pc_aps_begin_fenced,
 * which opens the transaction and asserts the term in one call, + one row update) or unfenced
 * (START TRANSACTION, the same update, COMMIT), and reports how many committed. Its store is
 * opened as a worker process opens its own (open-lazy.ts).
 */
import { parseDatabaseUrl } from '../../src/config/database-url.ts';
import { openStoreLazily } from '../../src/store/open-lazy.ts';
import { txQuery } from '../../src/store/tx-query.ts';
import type { Term, TxHandle } from '../../src/store/types.ts';

interface Go {
  type: 'go';
  fenced: boolean;
  durationMs: number;
  term: Term;
  row: string;
}

const store = await openStoreLazily(parseDatabaseUrl(process.env.APSUP_BENCH_DATABASE_URL));
process.on('message', async (m: Go | { type: 'exit' }) => {
  if (m.type === 'exit') {
    await store.close();
    process.exit(0);
  }
  if (m.type !== 'go') return;
  let commits = 0;
  const deadline = performance.now() + m.durationMs;
  while (performance.now() < deadline) {
    const update = (tx: TxHandle) => txQuery(tx, 'UPDATE ref_topic_cursors SET through_seq = through_seq + 1 WHERE scope_id = ?', [m.row]);
    // Fenced: the processor SDK's ctx.commit shape (Store.fencedTransaction, pc_aps_begin_fenced).
    if (m.fenced) await store.fencedTransaction(m.term, update);
    else await store.transaction(update);
    commits += 1;
  }
  process.send?.({ type: 'done', commits });
});
process.send?.({ type: 'ready' });
