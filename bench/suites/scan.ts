/**
 * scan: admitted scopes per second of one automatic scan over a backlog of N dirty scopes, with
 * pages of 500 admitted in one transaction each (pc_aps_begin_scan, pc_aps_admit_scan_page until
 * exhausted, pc_aps_finish_scan), and the peak RSS of this process while scanning. The scan never
 * holds more than one page in memory; the RSS difference between the smallest and the largest
 * backlog shows it.
 */
import path from 'node:path';
import { median, printTable, progress, writeResult } from '../lib/report.ts';
import { scanThroughputSpec, writeSvg } from '../lib/chart.ts';
import { openBenchDatabase } from '../lib/fixture.ts';
import { seedDirtyScopes } from '../lib/seed.ts';
import type { Backend } from '../../src/store/types.ts';

export interface ScanOptions {
  backends: Backend[];
  sizes: Record<Backend, number[]>;
  repeat: number;
  pageSize: number;
}

export interface ScanRun { backend: Backend; scopes: number; admitted: number; seconds: number; perSecond: number; peakRssMiB: number; scanRssGrowthMiB: number }

export async function runScanSuite(options: ScanOptions): Promise<Array<ScanRun & { runs: number[] }>> {
  const results: Array<ScanRun & { runs: number[] }> = [];
  for (const backend of options.backends) {
    for (const scopes of options.sizes[backend]) {
      progress(`scan ${backend}: seeding ${scopes.toLocaleString('en-US')} dirty scopes`);
      const fx = await openBenchDatabase(backend);
      try {
        await seedDirtyScopes(fx, 'bench-family', scopes);
        if (backend === 'mysql') await fx.exec('ANALYZE TABLE pc_artifact_processing_intents');
        else await fx.exec('ANALYZE');
        const lease = await fx.store.acquireTerm('global', 'bench-holder', 600_000);
        const term = { supervisorKey: 'global', holderId: 'bench-holder', supervisorGeneration: lease.supervisorGeneration };
        const rates: number[] = [];
        let peakRss = 0;
        let growth = 0;
        let lastAdmitted = 0;
        for (let rep = 0; rep < options.repeat; rep += 1) {
          if (rep > 0) {
            // Next repetition: every owed request acknowledged and every key dirty again, so the
            // next scan generation admits the whole backlog with a fresh request each.
            await fx.exec('UPDATE pc_artifact_processing_intents SET handled_generation = requested_generation, dirty_generation = dirty_generation + 1');
          }
          global.gc?.();
          const policy = { kind: 'cron' as const, fireAt: (await fx.store.readBindingState('bench-family')).dbNow };
          const rssBefore = process.memoryUsage().rss;
          let scanPeak = rssBefore;
          const started = performance.now();
          const scan = await fx.store.beginScan(term, 'bench-family', policy);
          if (scan.outcome !== 'started') throw new Error(`scan did not start: ${scan.outcome}`);
          let after = 0;
          let admitted = 0;
          let pages = 0;
          for (;;) {
            const page = await fx.store.admitScanPage(term, 'bench-family', scan.scanGeneration, after, options.pageSize);
            admitted += page.keys.length;
            after = page.nextAfterSequence;
            pages += 1;
            if (pages % 20 === 0) scanPeak = Math.max(scanPeak, process.memoryUsage().rss);
            if (page.exhausted) break;
          }
          await fx.store.finishScan(term, 'bench-family', scan.scanGeneration);
          const seconds = (performance.now() - started) / 1000;
          scanPeak = Math.max(scanPeak, process.memoryUsage().rss);
          peakRss = Math.max(peakRss, scanPeak);
          growth = Math.max(growth, scanPeak - rssBefore);
          if (admitted !== scopes) throw new Error(`scan admitted ${admitted} of ${scopes} scopes`);
          lastAdmitted = admitted;
          rates.push(admitted / seconds);
          progress(`scan ${backend} ${scopes.toLocaleString('en-US')}: repetition ${rep + 1}/${options.repeat}: ${Math.round(admitted / seconds).toLocaleString('en-US')}/s`);
        }
        const perSecond = median(rates);
        results.push({ backend, scopes, admitted: lastAdmitted, seconds: lastAdmitted / perSecond, perSecond, peakRssMiB: peakRss / 2 ** 20, scanRssGrowthMiB: growth / 2 ** 20, runs: rates });
      } finally {
        await fx.close();
      }
    }
  }
  printTable(
    `scan: one automatic scan, pages of ${options.pageSize} (median of ${options.repeat})`,
    ['backend', 'dirty scopes', 'admitted/s', 'scan seconds', 'peak RSS MiB', 'RSS growth during scan MiB'],
    results.map((r) => [r.backend, r.scopes, r.perSecond, r.seconds, r.peakRssMiB, r.scanRssGrowthMiB]),
  );
  for (const backend of options.backends) {
    const mine = results.filter((r) => r.backend === backend);
    if (mine.length >= 2) {
      const small = mine[0];
      const large = mine[mine.length - 1];
      console.log(`${backend}: RSS difference between ${small.scopes.toLocaleString('en-US')} and ${large.scopes.toLocaleString('en-US')} scopes: ${(large.peakRssMiB - small.peakRssMiB).toFixed(1)} MiB`);
    }
  }
  const json = writeResult('scan', results);
  console.log(`raw results: ${json}`);
  const chart = await writeSvg(json.replace(/\.json$/, '.svg'), scanThroughputSpec(
    results.map((r) => ({ backend: r.backend === 'mysql' ? 'MariaDB' : 'SQLite', scopes: r.scopes, perSecond: Math.round(r.perSecond) })),
    `scan: admitted scopes/s by backlog size (pages of ${options.pageSize}, median of ${options.repeat})`,
  ));
  console.log(`chart: ${chart} (${path.basename(chart)})`);
  return results;
}
