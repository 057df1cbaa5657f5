/**
 * The scanning process of the `scan` suite: a supervisor-like process that only scans. It opens
 * the store the way a runtime host does (openStore on APSUP_BENCH_DATABASE_URL) and loads the
 * runtime's modules, so its baseline memory is that of a supervisor host; it never seeds (the
 * suite seeds from its own process). One process per backlog size, so its peak RSS
 * (getrusage ru_maxrss, i.e. process.resourceUsage().maxRSS) is the peak of scanning that size.
 * IPC (each request carries an id that its reply repeats):
 *   scan {term, binding, pageSize} -> scanned {admitted, pages, seconds, rssBeforeMiB, rssSampledPeakMiB, maxRssMiB}
 *        one automatic scan: pc_aps_begin_scan, pc_aps_admit_scan_page until exhausted, pc_aps_finish_scan
 *   exit                           -> bye, then the process exits
 */
import { parseDatabaseUrl } from '../../src/config/database-url.ts';
import { openStore } from '../../src/store/open.ts';
import type { Term } from '../../src/store/types.ts';

await import('../../src/runtime/runtime.ts');
const store = openStore(parseDatabaseUrl(process.env.APSUP_BENCH_DATABASE_URL));
const MiB = 2 ** 20;

type Msg = { id: number; type: 'scan'; term: Term; binding: string; pageSize: number } | { id: number; type: 'exit' };

async function scan(m: Extract<Msg, { type: 'scan' }>): Promise<Record<string, unknown>> {
  const policy = { kind: 'cron' as const, fireAt: (await store.readBindingState(m.binding)).dbNow };
  const rssBefore = process.memoryUsage().rss;
  let sampledPeak = rssBefore;
  const started = performance.now();
  const begun = await store.beginScan(m.term, m.binding, policy);
  if (begun.outcome !== 'started') throw new Error(`scan did not start: ${begun.outcome}`);
  let after = 0;
  let admitted = 0;
  let pages = 0;
  for (;;) {
    const page = await store.admitScanPage(m.term, m.binding, begun.scanGeneration, after, m.pageSize);
    admitted += page.keys.length;
    after = page.nextAfterSequence;
    pages += 1;
    if (pages % 20 === 0) sampledPeak = Math.max(sampledPeak, process.memoryUsage().rss);
    if (page.exhausted) break;
  }
  await store.finishScan(m.term, m.binding, begun.scanGeneration);
  const seconds = (performance.now() - started) / 1000;
  sampledPeak = Math.max(sampledPeak, process.memoryUsage().rss);
  return {
    type: 'scanned',
    admitted,
    pages,
    seconds,
    rssBeforeMiB: rssBefore / MiB,
    rssSampledPeakMiB: sampledPeak / MiB,
    maxRssMiB: (process.resourceUsage().maxRSS * 1024) / MiB,
  };
}

process.on('message', (m: Msg) => {
  void (async () => {
    if (m.type === 'exit') {
      await store.close();
      process.send?.({ id: m.id, type: 'bye' });
      setTimeout(() => process.exit(0), 20);
      return;
    }
    try {
      process.send?.({ id: m.id, ...(await scan(m)) });
    } catch (error) {
      process.send?.({ id: m.id, type: 'error', error: (error as Error).stack ?? String(error) });
    }
  })();
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready' });
