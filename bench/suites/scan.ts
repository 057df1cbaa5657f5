/**
 * scan: admitted scopes per second of one automatic scan over a backlog of N dirty scopes
 * (pc_aps_begin_scan, pc_aps_admit_scan_page with pages of --page scopes, default 500 = the
 * runtime's SCAN_PAGE_SIZE, until exhausted, pc_aps_finish_scan), and the peak RSS of the process
 * that scans. The backlog is seeded from this process; the scan runs in a separate child
 * (bench/suites/scan-child.ts), a supervisor-like process that only scans, one per backlog size,
 * so its peak RSS (ru_maxrss) is that of a supervisor scanning that backlog and nothing else.
 * Memory must not grow with the backlog: the RSS difference between the smallest and the largest
 * backlog is printed. Note: a dispatching runtime caps an admission page at the ready queue's free
 * room (READY_QUEUE_SIZE, default 64); this suite admits into a queue that never fills, so it
 * measures the scan itself (--page 64 shows the runtime's smallest full page).
 * Writes the raw JSON and an SVG chart of throughput against backlog size (vega-lite) next to it,
 * and the same chart as scan-latest.svg in the results directory.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, printTable, progress, writeResult } from '../lib/report.ts';
import { scanThroughputSpec, writeSvg } from '../lib/chart.ts';
import { call, forkReady, track, waitExit } from '../lib/children.ts';
import { openBenchDatabase } from '../lib/fixture.ts';
import { seedDirtyScopes } from '../lib/seed.ts';
import type { Backend } from '../../src/store/types.ts';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'scan-child.ts');

export interface ScanOptions {
  backends: Backend[];
  sizes: Record<Backend, number[]>;
  repeat: number;
  pageSize: number;
}

export interface ScanRun {
  backend: Backend;
  scopes: number;
  admitted: number;
  seconds: number;
  perSecond: number;
  /** Peak RSS (ru_maxrss) of the scanning process over every repetition at this size. */
  peakRssMiB: number;
  /** RSS of the scanning process before its first scan (store open, modules loaded). */
  baseRssMiB: number;
  /** Largest sampled RSS growth during one scan. */
  scanRssGrowthMiB: number;
}

type Scanned = { admitted: number; pages: number; seconds: number; rssBeforeMiB: number; rssSampledPeakMiB: number; maxRssMiB: number };

export async function runScanSuite(options: ScanOptions): Promise<Array<ScanRun & { runs: number[] }>> {
  const results: Array<ScanRun & { runs: number[] }> = [];
  for (const backend of options.backends) {
    for (const scopes of [...options.sizes[backend]].sort((a, b) => a - b)) {
      progress(`scan ${backend}: seeding ${scopes.toLocaleString('en-US')} dirty scopes (in the bench process)`);
      const fx = await openBenchDatabase(backend);
      try {
        await seedDirtyScopes(fx, 'bench-family', scopes);
        if (backend === 'mysql') await fx.exec('ANALYZE TABLE pc_artifact_processing_intents');
        else await fx.exec('ANALYZE');
        const lease = await fx.store.acquireTerm('global', 'bench-holder', 600_000);
        const term = { supervisorKey: 'global', holderId: 'bench-holder', supervisorGeneration: lease.supervisorGeneration };
        const child = track(await forkReady(CHILD, { APSUP_BENCH_DATABASE_URL: fx.db.url }));
        const rates: number[] = [];
        let peakRss = 0;
        let baseRss = 0;
        let growth = 0;
        let lastAdmitted = 0;
        try {
          for (let rep = 0; rep < options.repeat; rep += 1) {
            if (rep > 0) {
              // Next repetition: every owed request acknowledged and every key dirty again, so the
              // next scan generation admits the whole backlog with a fresh request each.
              await fx.exec('UPDATE pc_artifact_processing_intents SET handled_generation = requested_generation, dirty_generation = dirty_generation + 1');
            }
            const r = await call<Scanned>(child, { type: 'scan', term, binding: 'bench-family', pageSize: options.pageSize });
            if (r.admitted !== scopes) throw new Error(`scan admitted ${r.admitted} of ${scopes} scopes`);
            if (rep === 0) baseRss = r.rssBeforeMiB;
            peakRss = Math.max(peakRss, r.maxRssMiB);
            growth = Math.max(growth, r.rssSampledPeakMiB - r.rssBeforeMiB);
            lastAdmitted = r.admitted;
            rates.push(r.admitted / r.seconds);
            progress(
              `scan ${backend} ${scopes.toLocaleString('en-US')}: repetition ${rep + 1}/${options.repeat}: ${Math.round(r.admitted / r.seconds).toLocaleString('en-US')}/s (${r.pages} pages), scanner peak RSS ${r.maxRssMiB.toFixed(1)} MiB`,
            );
          }
        } finally {
          await call(child, { type: 'exit' }).catch(() => undefined);
          await waitExit(child, 5_000);
        }
        const perSecond = median(rates);
        results.push({
          backend,
          scopes,
          admitted: lastAdmitted,
          seconds: lastAdmitted / perSecond,
          perSecond,
          peakRssMiB: peakRss,
          baseRssMiB: baseRss,
          scanRssGrowthMiB: growth,
          runs: rates,
        });
      } finally {
        await fx.close();
      }
    }
  }
  printTable(
    `scan: one automatic scan, pages of ${options.pageSize}, in a separate scanning process (median of ${options.repeat})`,
    ['backend', 'dirty scopes', 'admitted/s', 'scan seconds', 'scanner peak RSS MiB', 'scanner RSS before scanning MiB', 'RSS growth during one scan MiB'],
    results.map((r) => [r.backend, r.scopes, r.perSecond, r.seconds, r.peakRssMiB, r.baseRssMiB, r.scanRssGrowthMiB]),
  );
  for (const backend of options.backends) {
    const mine = results.filter((r) => r.backend === backend);
    if (mine.length >= 2) {
      const small = mine[0];
      const large = mine[mine.length - 1];
      const diff = large.peakRssMiB - small.peakRssMiB;
      console.log(
        `${backend}: scanner peak RSS difference between ${small.scopes.toLocaleString('en-US')} and ${large.scopes.toLocaleString('en-US')} scopes: ${diff.toFixed(1)} MiB (${(diff * 1.048576).toFixed(1)} MB)`,
      );
    }
  }
  const json = writeResult('scan', results);
  console.log(`raw results: ${json}`);
  const chart = await writeSvg(
    json.replace(/\.json$/, '.svg'),
    scanThroughputSpec(
      results.map((r) => ({ backend: r.backend === 'mysql' ? 'MariaDB' : 'SQLite', scopes: r.scopes, perSecond: Math.round(r.perSecond) })),
      `scan: admitted scopes/s by backlog size (pages of ${options.pageSize}, median of ${options.repeat})`,
    ),
  );
  const latest = path.join(path.dirname(chart), 'scan-latest.svg');
  fs.copyFileSync(chart, latest);
  console.log(`chart: ${chart} (also ${latest})`);
  return results;
}
