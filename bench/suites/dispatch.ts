/**
 * dispatch: end-to-end scope invocations per second through the whole supervisor: automatic
 * admission of a seeded backlog of dirty scopes (interval schedule 1 s, so the first scan begins
 * at start-up), dispatch to worker processes, a no-op processor (ctx.acknowledge, confirming the
 * snapshot clean), settlement and budget release. The runtime runs in its own host process
 * (bench/lib/runtime-child.ts) with the bench families module. Default 50,000 invocations (the
 * issue's figure); `all` runs fewer.
 *
 * The clock runs from the start command until the last invocation's acknowledgement. Completion
 * is detected without SQL on the hot path: the runtime host counts worker outcomes in process (the
 * partitions' onInvocation hook, a counter) and pushes a message at 10 % and at N; the suite then
 * confirms with one COUNT query that no key of the backlog owes work (requested > handled or
 * dirty > clean), and only if some does (a retried failure, an acknowledgement still being
 * committed) polls every 20 ms until none does. A COUNT every 2 s guards against a count that
 * never reaches N. (The former COUNT every 50 ms from this process cost CPU on the same cores and
 * grew with the backlog; see bench/RESULTS.md.) Worker processes start with the runtime
 * (WARM_WORKERS) or lazily, so "from start" includes their start-up; "after the first 10 %"
 * excludes it.
 *
 * Two shapes: W workers in one family, and 4 families sharing one supervisor (the same N, and W
 * split evenly, at least one worker each); SQLite once per --sqlite-synchronous setting.
 * graphile-worker, pg-boss and BullMQ run the same jobs at the same concurrency (bench/lib/peers;
 * jobs added in bulk before the clock, like the seeded backlog); their repetitions are
 * interleaved with the supervisor's (repetition r of every supervisor shape, then repetition r of
 * each peer), so every ratio compares runs made minutes apart at most. Each row shows the
 * system's durability setting, read from the server; an unreachable peer is listed as skipped.
 */
import type { ChildProcess } from 'node:child_process';
import { median, printTable, progress, writeResult } from '../lib/report.ts';
import { openBenchDatabase, type BackendFixtureLike } from '../lib/fixture.ts';
import { seedDirtyScopes } from '../lib/seed.ts';
import { BENCH_FAMILY_NAMES, benchBinding } from '../fixtures/families.ts';
import { call } from '../lib/children.ts';
import { forkRuntime, remainingWork, runtimeEnv, sleep, stopRuntime } from '../lib/runtime-host.ts';
import type { RuntimeStatus } from '../../src/runtime/runtime-status.ts';
import type { StatementCounts } from '../lib/count-statements.ts';
import type { Backend } from '../../src/store/types.ts';
import { peerResult, type PeerResult } from './peer.ts';
import { openPeers, type SkippedPeer } from '../lib/peers/open.ts';
import type { DrainRun } from '../lib/peers/types.ts';
import { ourDurability } from '../lib/durability.ts';
import type { SqliteSynchronous } from '../../src/store/sqlite/synchronous.ts';

export interface DispatchOptions {
  backends: Backend[];
  invocations: number;
  workers: number;
  repeat: number;
  familyCounts: number[];
  peer: boolean;
  /** SQLite PRAGMA synchronous settings to run (default NORMAL). */
  synchronous?: SqliteSynchronous[];
}

export interface DispatchPeerRow {
  system: string;
  backend: string;
  durability: string;
  notes: string;
  perSecond: number;
  steadyPerSecond: number;
  runs: DrainRun[];
}

export interface DispatchRun {
  seconds: number;
  perSecond: number;
  steadyPerSecond: number;
  invocations: number;
  failures: number;
  workerProcesses: number;
  completion: 'counted' | 'polled';
  confirmPolls: number;
}

export interface DispatchRow {
  backend: Backend;
  synchronous: SqliteSynchronous | null;
  durability: string;
  families: number;
  workersPerFamily: number;
  invocations: number;
  perSecond: number;
  steadyPerSecond: number;
  runs: DispatchRun[];
}

interface Shape {
  backend: Backend;
  synchronous: SqliteSynchronous | null;
  durability: string;
  families: number;
  workersPerFamily: number;
  fx: BackendFixtureLike;
  bindings: string[];
  env: NodeJS.ProcessEnv;
  runs: DispatchRun[];
}

const wallNow = () => performance.timeOrigin + performance.now();

function split(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

function label(s: { backend: Backend; synchronous?: SqliteSynchronous | null; families: number; workersPerFamily: number }): string {
  return `dispatch ${s.backend}${s.synchronous ? ` ${s.synchronous}` : ''} ${s.families} famil${s.families === 1 ? 'y' : 'ies'} x ${s.workersPerFamily} workers`;
}

async function prepare(
  backend: Backend,
  synchronous: SqliteSynchronous | null,
  families: number,
  workersPerFamily: number,
  invocations: number,
): Promise<Shape> {
  const fx = await openBenchDatabase(backend);
  const bindings = BENCH_FAMILY_NAMES.slice(0, families).map(benchBinding);
  const counts = split(invocations, families);
  for (let i = 0; i < families; i += 1) await seedDirtyScopes(fx, bindings[i], counts[i]);
  await fx.exec(backend === 'mysql' ? 'ANALYZE TABLE pc_artifact_processing_intents' : 'ANALYZE');
  const env = runtimeEnv(fx.db.url, {
    APSUP_BENCH_FAMILIES: families,
    APSUP_BENCH_PROCESSOR: 'noop',
    APSUP_BENCH_SCHEDULE_SECONDS: 1,
    APSUP_BENCH_MAX_WORKERS: workersPerFamily,
    POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_ROLE: 'all',
    // APSUP_BENCH_DISPATCH_COUNT=1: also count the host's SQL statements (adds a little overhead).
    APSUP_BENCH_COUNT_SQL: process.env.APSUP_BENCH_DISPATCH_COUNT === '1' ? 1 : undefined,
    POWERCONTEXT_SERVER_RUNTIME_SQLITE_SYNCHRONOUS: synchronous ?? undefined,
  });
  return { backend, synchronous, durability: await ourDurability(fx, synchronous ?? 'NORMAL'), families, workersPerFamily, fx, bindings, env, runs: [] };
}

async function runOnce(shape: Shape, invocations: number, rep: number, repeat: number): Promise<DispatchRun> {
  const { fx, bindings, backend } = shape;
  if (rep > 0) {
    // Every key has ordinary work again; the schedule is due at once.
    const marks = bindings.map(() => '?').join(', ');
    await fx.exec(`UPDATE pc_artifact_processing_intents SET dirty_generation = dirty_generation + 1 WHERE binding_name IN (${marks})`, bindings);
    await fx.exec('UPDATE pc_artifact_processing_binding_states SET last_schedule_checkpoint_at = NULL');
  }
  const child: ChildProcess = await forkRuntime(shape.env, `dispatch-${backend}`);
  const tenth = Math.ceil(invocations * 0.1);
  const marks: { tenth?: number; done?: number } = {};
  const onMark = (m: { type: string; what?: 'tenth' | 'done'; t?: number }) => {
    if (m.type === 'mark' && m.what && marks[m.what] === undefined) marks[m.what] = m.t;
  };
  child.on('message', onMark);
  try {
    const t0 = wallNow();
    const started = await call<{ counting: boolean }>(child, { type: 'start', expect: invocations });
    const completion: DispatchRun['completion'] = started.counting ? 'counted' : 'polled';
    let end = 0;
    let tenthAt = 0;
    let confirmPolls = 0;
    let lastReport = t0;
    let lastGuard = t0;
    for (;;) {
      const now = wallNow();
      if (completion === 'counted') {
        if (marks.done !== undefined || now - lastGuard >= 2000) {
          // Confirmation after the N-th outcome (or the 2 s guard): nothing owed any more.
          lastGuard = now;
          const work = await remainingWork(fx, bindings);
          if (marks.done !== undefined) confirmPolls += 1;
          if (work.dirty + work.owed === 0) {
            end = confirmPolls <= 1 && marks.done !== undefined ? marks.done : wallNow();
            if (marks.done === undefined)
              progress(`${label(shape)}: the backlog drained before ${invocations} outcomes were counted; end time from the 2 s guard (up to 2 s late)`);
            break;
          }
        }
      } else {
        // No outcome counter in the host (an older runtime): poll the database every 250 ms.
        const work = await remainingWork(fx, bindings);
        if (!tenthAt && work.dirty <= invocations - tenth) tenthAt = wallNow();
        if (work.dirty + work.owed === 0) {
          end = wallNow();
          break;
        }
      }
      if (now - lastReport > 5000) {
        const status = (await call<{ status: RuntimeStatus }>(child, { type: 'status' })).status;
        const done = status.families.reduce((s, f) => s + f.invocations, 0);
        progress(
          `${label(shape)}: repetition ${rep + 1}/${repeat}: ${done.toLocaleString('en-US')} of ${invocations.toLocaleString('en-US')} invocations after ${((now - t0) / 1000).toFixed(1)} s`,
        );
        lastReport = now;
      }
      if (now - t0 > 900_000) throw new Error(`${label(shape)}: backlog not drained after 900 s`);
      await sleep(completion === 'polled' ? 250 : marks.done !== undefined ? 20 : 50);
    }
    if (completion === 'counted') tenthAt = marks.tenth ?? t0;
    const status = (await call<{ status: RuntimeStatus }>(child, { type: 'status' })).status;
    if (process.env.APSUP_BENCH_DISPATCH_COUNT === '1') {
      const counts = await call<StatementCounts>(child, { type: 'counts' });
      const top = Object.entries(counts.byKind)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${(v / invocations).toFixed(2)}`)
        .join(', ');
      progress(`${label(shape)}: host statements per invocation: ${(counts.total / invocations).toFixed(2)} (${top})`);
      if (counts.hostCpuMs !== undefined)
        progress(`${label(shape)}: host CPU per invocation (start-up included): ${((1000 * counts.hostCpuMs) / invocations).toFixed(0)} us`);
      const slow = Object.entries(counts.sqliteMs ?? {})
        .sort((a, b) => b[1].ms - a[1].ms)
        .slice(0, 12);
      for (const [sql, t] of slow)
        progress(`  ${((1000 * t.ms) / invocations).toFixed(1)} us CPU/invocation, ${(t.n / invocations).toFixed(2)} per invocation: ${sql}`);
    }
    const seconds = (end - t0) / 1000;
    const done = status.families.reduce((s, f) => s + f.invocations, 0);
    const failures = status.families.reduce((s, f) => s + Object.values(f.failures).reduce((a, b) => a + b, 0), 0);
    const run: DispatchRun = {
      seconds,
      perSecond: invocations / seconds,
      steadyPerSecond: (invocations - tenth) / ((end - (tenthAt || t0)) / 1000),
      invocations: done,
      failures,
      workerProcesses: shape.families * shape.workersPerFamily,
      completion,
      confirmPolls,
    };
    progress(
      `${label(shape)}: repetition ${rep + 1}/${repeat}: ${invocations.toLocaleString('en-US')} in ${seconds.toFixed(2)} s = ${Math.round(run.perSecond)}/s (after the first 10 %: ${Math.round(run.steadyPerSecond)}/s; invocations counted ${done}, failures ${failures}, completion ${completion})`,
    );
    return run;
  } finally {
    child.off('message', onMark);
    await stopRuntime(child);
  }
}

export async function runDispatchSuite(
  options: DispatchOptions,
): Promise<{ rows: DispatchRow[]; peer: PeerResult | null; peers: DispatchPeerRow[]; skipped: SkippedPeer[] }> {
  const shapes: Shape[] = [];
  const peerRows: DispatchPeerRow[] = [];
  let skipped: SkippedPeer[] = [];
  try {
    for (const backend of options.backends) {
      for (const synchronous of backend === 'sqlite' ? (options.synchronous ?? ['NORMAL' as const]) : [null]) {
        for (const families of options.familyCounts) {
          const perFamily = Math.max(1, Math.ceil(options.workers / families));
          progress(
            `${label({ backend, synchronous, families, workersPerFamily: perFamily })}: seeding ${options.invocations.toLocaleString('en-US')} dirty scopes`,
          );
          shapes.push(await prepare(backend, synchronous, families, perFamily, options.invocations));
        }
      }
    }
    const opened = options.peer ? await openPeers(options.workers) : { peers: [], skipped: [] };
    skipped = opened.skipped;
    for (const s of skipped) progress(`peer ${s.name}: skipped: ${s.reason}`);
    for (const p of opened.peers)
      peerRows.push({ system: p.name, backend: p.backend, durability: p.durability, notes: p.notes, perSecond: 0, steadyPerSecond: 0, runs: [] });
    try {
      for (let rep = 0; rep < options.repeat; rep += 1) {
        for (const shape of shapes) shape.runs.push(await runOnce(shape, options.invocations, rep, options.repeat));
        for (const [i, p] of opened.peers.entries()) {
          progress(
            `peer ${p.name}: repetition ${rep + 1}/${options.repeat}: ${options.invocations.toLocaleString('en-US')} no-op jobs, concurrency ${options.workers}`,
          );
          const r = await p.drain(options.invocations, options.workers);
          peerRows[i].runs.push(r);
          progress(
            `peer ${p.name}: repetition ${rep + 1}/${options.repeat}: ${Math.round(r.perSecond).toLocaleString('en-US')} jobs/s (after the first 10 %: ${Math.round(r.steadyPerSecond)}/s)`,
          );
        }
      }
    } finally {
      for (const p of opened.peers) await p.close().catch(() => undefined);
    }
  } finally {
    for (const s of shapes) await s.fx.close();
  }
  for (const r of peerRows) {
    r.perSecond = median(r.runs.map((x) => x.perSecond));
    r.steadyPerSecond = median(r.runs.map((x) => x.steadyPerSecond));
  }
  const gwRow = peerRows.find((r) => r.system === 'graphile-worker');
  const peer: PeerResult | null = gwRow
    ? peerResult(
        gwRow.runs.map((r) => ({ jobs: r.jobs, concurrency: r.concurrency, seconds: r.seconds, perSecond: r.perSecond, steadyPerSecond: r.steadyPerSecond })),
      )
    : options.peer
      ? { ok: false, reason: skipped.find((s) => s.name === 'graphile-worker')?.reason ?? 'not run' }
      : null;
  const rows: DispatchRow[] = shapes.map((s) => ({
    backend: s.backend,
    synchronous: s.synchronous,
    durability: s.durability,
    families: s.families,
    workersPerFamily: s.workersPerFamily,
    invocations: options.invocations,
    perSecond: median(s.runs.map((r) => r.perSecond)),
    steadyPerSecond: median(s.runs.map((r) => r.steadyPerSecond)),
    runs: s.runs,
  }));
  const ratio = (v: number, p: number | undefined) => (p ? `${(v / p).toFixed(2)}x` : 'n/a');
  const range = (xs: number[]) => (xs.length > 1 ? `${Math.round(Math.min(...xs))} to ${Math.round(Math.max(...xs))}` : '');
  const gw = peer?.ok ? peer : undefined;
  printTable(
    `dispatch: ${options.invocations.toLocaleString('en-US')} no-op invocations end to end, worker budget ${options.workers} (median of ${options.repeat}; peers interleaved)`,
    [
      'system',
      'backend',
      'durability',
      'families x workers',
      'invocations/s (from start)',
      'range',
      'after first 10 %',
      'vs graphile-worker (from start)',
      'vs graphile-worker (after 10 %)',
    ],
    [
      ...rows.map(
        (r) =>
          [
            'supervisor',
            r.backend,
            r.durability,
            `${r.families} x ${r.workersPerFamily}`,
            r.perSecond,
            range(r.runs.map((x) => x.perSecond)),
            r.steadyPerSecond,
            ratio(r.perSecond, gw?.perSecond),
            ratio(r.steadyPerSecond, gw?.steadyPerSecond),
          ] as Array<string | number>,
      ),
      ...peerRows.map(
        (r) =>
          [
            r.system,
            r.backend,
            r.durability,
            `concurrency ${options.workers} (${r.notes})`,
            r.perSecond,
            range(r.runs.map((x) => x.perSecond)),
            r.steadyPerSecond,
            ratio(r.perSecond, gw?.perSecond),
            ratio(r.steadyPerSecond, gw?.steadyPerSecond),
          ] as Array<string | number>,
      ),
      ...skipped.map((s) => [s.name, '-', '-', 'skipped', s.reason, '', '', '', ''] as Array<string | number>),
    ],
  );
  if (rows.some((r) => r.families * r.workersPerFamily > options.workers))
    console.log(`note: ${options.workers} workers cannot be split over ${Math.max(...options.familyCounts)} families; each family got at least one`);
  console.log(`raw results: ${writeResult('dispatch', { invocations: options.invocations, workers: options.workers, rows, peer, peers: peerRows, skipped })}`);
  return { rows, peer, peers: peerRows, skipped };
}
