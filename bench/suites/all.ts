/**
 * all: every suite once, with defaults sized to finish in about 10 minutes on 2 cores, in an order
 * that lets `floor` use this run's scan and fence figures; then the targets next to the figures.
 */
import type { Backend } from '../../src/store/types.ts';
import { printTable, progress, writeResult } from '../lib/report.ts';
import { runScanSuite } from './scan.ts';
import { runFenceSuite } from './fence.ts';
import { runFloorSuite } from './floor.ts';
import { runDispatchSuite } from './dispatch.ts';
import { runLatencySuite } from './latency.ts';
import { runFailoverSuite } from './failover.ts';
import { runIdleSuite } from './idle.ts';

export interface AllOptions {
  backends: Backend[];
  scanSizes: Record<Backend, number[]>;
  repeat: number;
  pageSize: number;
  fenceWorkers: number;
  durationMs: number;
  invocations: number;
  dispatchWorkers: number;
  triggers: number;
  gapMs: number;
  ttlSeconds: number;
  renewSeconds: number;
  idleWindowSeconds: number;
}

export async function runAll(o: AllOptions): Promise<void> {
  const started = performance.now();
  const mysql = o.backends.includes('mysql');
  const sqlite = o.backends.includes('sqlite');
  const step = (name: string) => progress(`all: ${name} (${((performance.now() - started) / 1000).toFixed(0)} s elapsed)`);
  step('scan');
  const scan = await runScanSuite({ backends: o.backends, sizes: o.scanSizes, repeat: o.repeat, pageSize: o.pageSize });
  step('fence');
  const fence = await runFenceSuite({ backends: o.backends, workers: o.fenceWorkers, repeat: o.repeat, durationMs: o.durationMs });
  step('floor');
  const floor = await runFloorSuite({ backends: o.backends, workers: o.fenceWorkers, repeat: o.repeat, durationMs: o.durationMs, pageRows: 100_000, pageSize: o.pageSize, scan, fence });
  step(`dispatch and peer (${o.invocations.toLocaleString('en-US')} invocations)`);
  const dispatch = await runDispatchSuite({ backends: o.backends, invocations: o.invocations, workers: o.dispatchWorkers, repeat: o.repeat, familyCounts: [1, 4], peer: true });
  step(`latency (${o.triggers.toLocaleString('en-US')} triggers per path)`);
  const latency = await runLatencySuite({ backends: o.backends, triggers: o.triggers, gapMs: o.gapMs, workers: 4 });
  let failover: Awaited<ReturnType<typeof runFailoverSuite>> = [];
  if (mysql) {
    step('failover');
    failover = await runFailoverSuite({ ttlSeconds: o.ttlSeconds, renewSeconds: o.renewSeconds, repeat: o.repeat, backlog: 50_000 });
  }
  step(`idle (${o.idleWindowSeconds} s window)`);
  const idle = await runIdleSuite({ backends: o.backends, windowSeconds: o.idleWindowSeconds, settleSeconds: 3 });

  // Targets next to the figures of this run.
  const rows: Array<Array<string | number>> = [];
  const fmt = (n: number | undefined, digits = 0) => (n === undefined || !Number.isFinite(n) ? 'n/a' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));
  const verdict = (ok: boolean | undefined) => (ok === undefined ? 'not measured' : ok ? 'met' : 'NOT met');
  if (sqlite) {
    const big = scan.filter((r) => r.backend === 'sqlite').sort((a, b) => b.scopes - a.scopes)[0];
    const small = scan.filter((r) => r.backend === 'sqlite').sort((a, b) => a.scopes - b.scopes)[0];
    rows.push([`scan SQLite at ${fmt(big?.scopes)} scopes`, '>= 250,000 admitted/s at 1,000,000', big ? `${fmt(big.perSecond)}/s` : 'n/a', verdict(big && big.scopes >= 1_000_000 ? big.perSecond >= 250_000 : undefined)]);
    const diff = big && small && big !== small ? big.peakRssMiB - small.peakRssMiB : undefined;
    rows.push([`scan SQLite RSS ${fmt(small?.scopes)} vs ${fmt(big?.scopes)}`, '< 64 MB', diff === undefined ? 'n/a' : `${fmt(diff, 1)} MiB`, verdict(diff === undefined ? undefined : diff * 1.048576 < 64)]);
  }
  if (mysql) {
    const m = scan.find((r) => r.backend === 'mysql' && r.scopes === 100_000);
    rows.push(['scan MariaDB at 100,000 scopes', '>= 80,000 admitted/s', m ? `${fmt(m.perSecond)}/s` : 'n/a', verdict(m ? m.perSecond >= 80_000 : undefined)]);
  }
  const peer = dispatch.peer?.ok ? dispatch.peer : null;
  for (const backend of o.backends) {
    const d = dispatch.rows.find((r) => r.backend === backend && r.families === 1);
    const want = backend === 'sqlite' ? 3 : 1;
    const ratio = d && peer ? d.perSecond / peer.perSecond : undefined;
    const steady = d && peer ? d.steadyPerSecond / peer.steadyPerSecond : undefined;
    rows.push([`dispatch ${backend === 'sqlite' ? 'SQLite' : 'MariaDB'} vs graphile-worker`, `>= ${want}x`, ratio === undefined ? 'n/a (no PostgreSQL)' : `${ratio.toFixed(2)}x (after 10 %: ${steady!.toFixed(2)}x)`, verdict(ratio === undefined ? undefined : ratio >= want)]);
  }
  if (mysql) {
    const f = fence.find((r) => r.backend === 'mysql');
    rows.push([`fence MariaDB fenced/unfenced, ${o.fenceWorkers} workers`, '>= 90 %', f ? `${(f.ratio * 100).toFixed(1)} %` : 'n/a', verdict(f ? f.ratio >= 0.9 : undefined)]);
  }
  if (sqlite) {
    for (const path of ['in-process', 'other process']) {
      const l = latency.find((r) => r.backend === 'sqlite' && r.path === path);
      rows.push([`latency SQLite p99 (${path} trigger)`, '<= 10 ms', l ? `${l.p99.toFixed(2)} ms` : 'n/a', verdict(l ? l.p99 <= 10 : undefined)]);
    }
  }
  if (mysql && failover.length > 0) {
    const worst = Math.max(...failover.map((r) => r.killToFirstInvocationMs));
    const bound = (o.ttlSeconds + o.renewSeconds) * 1000;
    rows.push([`failover (TTL ${o.ttlSeconds} s, renewal ${o.renewSeconds} s), worst of ${failover.length}`, `<= ${fmt(bound)} ms`, `${fmt(worst)} ms`, verdict(worst <= bound)]);
  }
  if (sqlite) {
    for (const host of ['runtime', 'apsup-run'] as const) {
      const i = idle.find((r) => r.backend === 'sqlite' && r.host === host);
      rows.push([`idle SQLite ${host === 'runtime' ? 'supervisor Runtime' : 'apsup run (with durable tasks)'}, ${o.idleWindowSeconds} s`, '0 statements', i ? String(i.statements) : 'n/a', verdict(i ? i.statements === 0 : undefined)]);
    }
  }
  printTable(`all: targets and where we stand (${((performance.now() - started) / 60_000).toFixed(1)} minutes)`, ['target', 'wanted', 'measured', 'verdict'], rows);
  void floor;
  console.log(`raw results: ${writeResult('all', { options: o, targets: rows })}`);
}
