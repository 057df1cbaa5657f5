/**
 * fence: fenced business commits per second with W concurrent worker processes (each its own
 * connection; term asserted and one business row updated in one transaction) against the same
 * commits without the term assertion, on each backend; prints the ratio. The two variants
 * alternate within one run after an untimed warm-up of both, several repetitions, median reported.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Backend } from '../../src/store/types.ts';
import { forkReady, request } from '../lib/children.ts';
import { openBenchDatabase } from '../lib/fixture.ts';
import { median, printTable, progress, writeResult } from '../lib/report.ts';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fence-child.ts');

export interface FenceRow {
  backend: Backend;
  workers: number;
  fenced: number;
  unfenced: number;
  ratio: number;
  fencedRuns: number[];
  unfencedRuns: number[];
}

export async function runFenceSuite(options: { backends: Backend[]; workers: number; repeat: number; durationMs: number }): Promise<FenceRow[]> {
  const rows: FenceRow[] = [];
  for (const backend of options.backends) {
    const fx = await openBenchDatabase(backend);
    const children = [];
    try {
      const lease = await fx.store.acquireTerm('global', 'bench-fence', 600_000);
      const term = { supervisorKey: 'global', holderId: 'bench-fence', supervisorGeneration: lease.supervisorGeneration };
      for (let i = 0; i < options.workers; i += 1) await fx.exec('INSERT INTO ref_topic_cursors (scope_id, through_seq) VALUES (?, 0)', [`w${i}`]);
      progress(`fence ${backend}: starting ${options.workers} worker processes`);
      for (let i = 0; i < options.workers; i += 1) children.push(await forkReady(CHILD, { APSUP_BENCH_DATABASE_URL: fx.db.url }));
      const fencedRuns: number[] = [];
      const unfencedRuns: number[] = [];
      // Untimed warm-up of both variants (connections, buffer pool, prepared procedures): the first
      // measured window was consistently the slowest without it.
      for (const fenced of [true, false]) {
        await Promise.all(
          children.map((c, i) => request(c, { type: 'go', fenced, durationMs: Math.max(200, options.durationMs / 4), term, row: `w${i}` }, 'done')),
        );
      }
      for (let rep = 0; rep < options.repeat; rep += 1) {
        for (const fenced of rep % 2 === 0 ? [true, false] : [false, true]) {
          const results = await Promise.all(
            children.map((c, i) => request<{ commits: number }>(c, { type: 'go', fenced, durationMs: options.durationMs, term, row: `w${i}` }, 'done')),
          );
          const perSecond = results.reduce((s, r) => s + r.commits, 0) / (options.durationMs / 1000);
          (fenced ? fencedRuns : unfencedRuns).push(perSecond);
          progress(`fence ${backend}: repetition ${rep + 1}/${options.repeat} ${fenced ? 'fenced' : 'unfenced'}: ${Math.round(perSecond)} commits/s`);
        }
      }
      const fencedMedian = median(fencedRuns);
      const unfencedMedian = median(unfencedRuns);
      rows.push({
        backend,
        workers: options.workers,
        fenced: fencedMedian,
        unfenced: unfencedMedian,
        ratio: fencedMedian / unfencedMedian,
        fencedRuns,
        unfencedRuns,
      });
    } finally {
      for (const c of children) c.send({ type: 'exit' });
      await Promise.all(children.map((c) => new Promise((r) => c.once('exit', r))));
      await fx.close();
    }
  }
  printTable(
    `fence: business commits/s with ${options.workers} concurrent workers (median of ${options.repeat} x ${options.durationMs} ms)`,
    ['backend', 'fenced commits/s', 'unfenced commits/s', 'fenced / unfenced'],
    rows.map((r) => [r.backend, r.fenced, r.unfenced, `${(r.ratio * 100).toFixed(1)} %`]),
  );
  console.log(`raw results: ${writeResult('fence', rows)}`);
  return rows;
}
