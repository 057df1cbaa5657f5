/**
 * A benchmark `api` process: its own store on APSUP_BENCH_DATABASE_URL; accepts explicit
 * requests over IPC (trigger {binding, scope} -> triggered {t0, t1}: store.acceptRequest, the
 * same operation `apsup trigger` runs, without starting a CLI process per request).
 */
import { parseDatabaseUrl } from '../../src/config/database-url.ts';
import { openStore } from '../../src/store/open.ts';

const store = openStore(parseDatabaseUrl(process.env.APSUP_BENCH_DATABASE_URL));
const now = () => performance.timeOrigin + performance.now();

process.on('message', (m: { id: number; type: string; binding?: string; scope?: string }) => {
  void (async () => {
    if (m.type === 'exit') {
      await store.close();
      process.send?.({ id: m.id, type: 'bye' });
      setTimeout(() => process.exit(0), 20);
      return;
    }
    try {
      const t0 = now();
      await store.acceptRequest(m.binding!, m.scope!);
      process.send?.({ id: m.id, type: 'triggered', t0, t1: now() });
    } catch (error) {
      process.send?.({ id: m.id, type: 'error', error: (error as Error).message });
    }
  })();
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready' });
