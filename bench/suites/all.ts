/**
 * all: every suite once, with smaller defaults than the suites alone (dispatch invocations,
 * latency triggers per round, idle window) so that the whole run finishes in under 10 minutes on
 * 2 cores; --repeat, --workers and --backend reach every suite. Order: scan, fence, dispatch (with
 * graphile-worker interleaved), floor (which then prints this run's scan, fence and dispatch
 * figures as fractions of their floors), latency, failover (MySQL only), idle. Ends with the
 * targets of issue 4 next to what this run measured, and the run's own duration.
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

/** What `all` runs instead of the suites' own defaults (alone: 50,000 invocations, 2,000 triggers, 60 s windows). */
export const ALL_DEFAULTS = { invocations: 3_000, triggers: 100, idleWindowSeconds: 7 };
const ALONE = { invocations: 50_000, triggers: 2_000, idleWindowSeconds: 60 };
const BUDGET_MINUTES = 10;

export interface AllOptions {
  backends: Backend[];
  scanSizes: Record<Backend, number[]>;
  repeat: number;
  pageSize: number;
  fenceWorkers: number;
  dispatchWorkers: number;
  latencyWorkers: number;
  failoverWorkers: number;
  floorRows: number;
  durationMs: number;
  invocations: number;
  peer: boolean;
  triggers: number;
  gapMs: number;
  pollSeconds?: number;
  ttlSeconds: number;
  renewSeconds: number;
  failoverBacklog: number;
  idleWindowSeconds: number;
  /** Which of the smaller sizes came from ALL_DEFAULTS (not from the command line). */
  defaultsUsed: { invocations: boolean; triggers: boolean; idleWindowSeconds: boolean };
}

export async function runAll(o: AllOptions): Promise<void> {
  const started = performance.now();
  const mysql = o.backends.includes('mysql');
  const sqlite = o.backends.includes('sqlite');
  const n = (v: number) => v.toLocaleString('en-US');
  const smaller = [
    o.defaultsUsed.invocations ? `dispatch ${n(o.invocations)} invocations (alone: ${n(ALONE.invocations)})` : null,
    o.defaultsUsed.triggers ? `latency ${n(o.triggers)} triggers per round (alone: ${n(ALONE.triggers)})` : null,
    o.defaultsUsed.idleWindowSeconds ? `idle windows of ${o.idleWindowSeconds} s (alone: ${ALONE.idleWindowSeconds} s)` : null,
  ].filter((x): x is string => x !== null);
  const sizing =
    smaller.length > 0
      ? `all: smaller sizes than the suites alone, to finish in under ${BUDGET_MINUTES} minutes on 2 cores: ${smaller.join('; ')}`
      : 'all: sizes from the command line';
  console.log(sizing);
  const step = (name: string) => progress(`all: ${name} (${((performance.now() - started) / 1000).toFixed(0)} s elapsed)`);
  step('scan');
  const scan = await runScanSuite({ backends: o.backends, sizes: o.scanSizes, repeat: o.repeat, pageSize: o.pageSize });
  step('fence');
  const fence = await runFenceSuite({ backends: o.backends, workers: o.fenceWorkers, repeat: o.repeat, durationMs: o.durationMs });
  step(`dispatch and peer (${n(o.invocations)} invocations)`);
  const dispatch = await runDispatchSuite({
    backends: o.backends,
    invocations: o.invocations,
    workers: o.dispatchWorkers,
    repeat: o.repeat,
    familyCounts: [1, 4],
    peer: o.peer,
  });
  step('floor');
  await runFloorSuite({
    backends: o.backends,
    workers: o.fenceWorkers,
    dispatchWorkers: o.dispatchWorkers,
    repeat: o.repeat,
    durationMs: o.durationMs,
    pageRows: o.floorRows,
    pageSize: o.pageSize,
    scan,
    fence,
    dispatch: dispatch.rows,
  });
  step(`latency (${n(o.triggers)} triggers per round, ${o.repeat} rounds per path)`);
  const latency = await runLatencySuite({
    backends: o.backends,
    triggers: o.triggers,
    gapMs: o.gapMs,
    workers: o.latencyWorkers,
    repeat: o.repeat,
    pollSeconds: o.pollSeconds,
  });
  let failover: Awaited<ReturnType<typeof runFailoverSuite>> = [];
  if (mysql) {
    step('failover');
    failover = await runFailoverSuite({
      ttlSeconds: o.ttlSeconds,
      renewSeconds: o.renewSeconds,
      repeat: o.repeat,
      backlog: o.failoverBacklog,
      workers: o.failoverWorkers,
    });
  } else {
    console.log('\nfailover: skipped (MySQL only; this run is --backend sqlite)');
  }
  step(`idle (${o.repeat} windows of ${o.idleWindowSeconds} s)`);
  const idle = await runIdleSuite({ backends: o.backends, windowSeconds: o.idleWindowSeconds, settleSeconds: 3, repeat: o.repeat });

  // Targets of issue 4 next to the figures of this run.
  const rows: Array<Array<string | number>> = [];
  const fmt = (v: number | undefined, digits = 0) =>
    v === undefined || !Number.isFinite(v) ? 'n/a' : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const verdict = (ok: boolean | undefined) => (ok === undefined ? 'not measured' : ok ? 'met' : 'NOT met');
  if (sqlite) {
    const mine = scan.filter((r) => r.backend === 'sqlite').sort((a, b) => a.scopes - b.scopes);
    const small = mine[0];
    const big = mine.at(-1);
    rows.push([
      `scan SQLite at ${fmt(big?.scopes)} scopes`,
      '>= 250,000 admitted/s at 1,000,000',
      big ? `${fmt(big.perSecond)}/s` : 'n/a',
      verdict(big && big.scopes >= 1_000_000 ? big.perSecond >= 250_000 : undefined),
    ]);
    const diff = big && small && big !== small ? big.peakRssMiB - small.peakRssMiB : undefined;
    rows.push([
      `scan SQLite scanner peak RSS ${fmt(small?.scopes)} vs ${fmt(big?.scopes)}`,
      '< 64 MB (10,000 vs 1,000,000)',
      diff === undefined ? 'n/a' : `${fmt(diff * 1.048576, 1)} MB`,
      verdict(diff === undefined || !(small!.scopes <= 10_000 && big!.scopes >= 1_000_000) ? undefined : diff * 1.048576 < 64),
    ]);
  }
  if (mysql) {
    const m = scan.find((r) => r.backend === 'mysql' && r.scopes === 100_000);
    rows.push(['scan MariaDB at 100,000 scopes', '>= 80,000 admitted/s', m ? `${fmt(m.perSecond)}/s` : 'n/a', verdict(m ? m.perSecond >= 80_000 : undefined)]);
  }
  const peer = dispatch.peer?.ok ? dispatch.peer : null;
  for (const backend of o.backends) {
    for (const d of dispatch.rows.filter((r) => r.backend === backend)) {
      const want = backend === 'sqlite' ? 3 : 1;
      const ratio = peer ? d.perSecond / peer.perSecond : undefined;
      const steady = peer ? d.steadyPerSecond / peer.steadyPerSecond : undefined;
      rows.push([
        `dispatch ${backend === 'sqlite' ? 'SQLite' : 'MariaDB'} ${d.families} x ${d.workersPerFamily} vs graphile-worker, ${n(d.invocations)} invocations${d.invocations < ALONE.invocations ? ` (issue: ${n(ALONE.invocations)})` : ''}`,
        `>= ${want}x`,
        ratio === undefined
          ? `n/a (${dispatch.peer && !dispatch.peer.ok ? 'no PostgreSQL' : 'peer not run'})`
          : `${ratio.toFixed(2)}x from start (after 10 %: ${steady!.toFixed(2)}x)`,
        verdict(ratio === undefined ? undefined : ratio >= want),
      ]);
    }
  }
  if (mysql) {
    const f = fence.find((r) => r.backend === 'mysql');
    rows.push([
      `fence MariaDB fenced/unfenced, ${o.fenceWorkers} workers`,
      '>= 90 % at 8 workers',
      f ? `${(f.ratio * 100).toFixed(1)} %` : 'n/a',
      verdict(f && o.fenceWorkers === 8 ? f.ratio >= 0.9 : undefined),
    ]);
  }
  if (sqlite) {
    for (const path of ['in-process', 'other process']) {
      const l = latency.find((r) => r.backend === 'sqlite' && r.path === path);
      rows.push([
        `latency SQLite p99 (${path} trigger), median of ${o.repeat} rounds of ${n(o.triggers)}${o.triggers < ALONE.triggers ? ` (issue: ${n(ALONE.triggers)})` : ''}`,
        '<= 10 ms',
        l ? `${l.p99.toFixed(2)} ms (all triggers: ${l.pooledP99.toFixed(2)} ms)` : 'n/a',
        verdict(l ? l.p99 <= 10 : undefined),
      ]);
    }
  }
  if (mysql) {
    const bound = (o.ttlSeconds + o.renewSeconds) * 1000;
    const worst = failover.length > 0 ? Math.max(...failover.map((r) => r.killToFirstInvocationMs)) : undefined;
    rows.push([
      `failover MariaDB (TTL ${o.ttlSeconds} s, renewal ${o.renewSeconds} s), worst of ${failover.length}`,
      `<= TTL + renewal = ${fmt(bound)} ms`,
      worst === undefined ? 'n/a' : `${fmt(worst)} ms`,
      verdict(worst === undefined ? undefined : worst <= bound),
    ]);
  }
  if (sqlite) {
    for (const host of ['runtime', 'apsup-run'] as const) {
      const i = idle.find((r) => r.backend === 'sqlite' && r.host === host);
      rows.push([
        `idle SQLite ${host === 'runtime' ? 'supervisor Runtime' : 'apsup run (with durable tasks)'}, median of ${o.repeat} windows of ${o.idleWindowSeconds} s`,
        '0 statements',
        i ? `${i.statements} (all windows: ${i.windows.reduce((s, w) => s + w.statements, 0)})` : 'n/a',
        verdict(i ? i.windows.every((w) => w.statements === 0) : undefined),
      ]);
    }
  }
  const minutes = (performance.now() - started) / 60_000;
  rows.push([
    `all: duration of this run (${o.backends.join(' and ')})`,
    `< ${BUDGET_MINUTES} minutes on 2 cores`,
    `${minutes.toFixed(1)} minutes`,
    verdict(minutes < BUDGET_MINUTES),
  ]);
  console.log(`\n${sizing}`);
  printTable(
    `all: targets of issue 4 and where this run stands (${minutes.toFixed(1)} minutes)`,
    ['target', 'wanted', 'measured in this run', 'verdict'],
    rows,
  );
  console.log(`raw results: ${writeResult('all', { options: o, targets: rows, minutes })}`);
}
