/**
 * One benchmark worker process of the `fence` suite: its own connection; on 'go' it runs
 * business commits for the given duration, fenced (pc_aps_assert_term + one row update, one
 * transaction) or unfenced (the same update alone), and reports how many committed.
 */
import { parseDatabaseUrl } from '../../src/config/database-url.ts';
import { openStore } from '../../src/store/open.ts';
import { txQuery } from '../../src/store/tx-query.ts';
import type { Term } from '../../src/store/types.ts';

interface Go { type: 'go'; fenced: boolean; durationMs: number; term: Term; row: string }

const store = openStore(parseDatabaseUrl(process.env.APSUP_BENCH_DATABASE_URL));
process.on('message', async (m: Go | { type: 'exit' }) => {
  if (m.type === 'exit') {
    await store.close();
    process.exit(0);
  }
  if (m.type !== 'go') return;
  let commits = 0;
  const deadline = performance.now() + m.durationMs;
  while (performance.now() < deadline) {
    await store.transaction(async (tx) => {
      if (m.fenced) await store.assertTerm(tx, m.term);
      await txQuery(tx, 'UPDATE ref_topic_cursors SET through_seq = through_seq + 1 WHERE scope_id = ?', [m.row]);
    });
    commits += 1;
  }
  process.send?.({ type: 'done', commits });
});
process.send?.({ type: 'ready' });
