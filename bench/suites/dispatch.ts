/**
 * dispatch: end-to-end scope invocations per second through the whole supervisor: automatic
 * admission of a seeded backlog of dirty scopes (interval schedule 1 s, so the first scan begins
 * at start-up), dispatch to worker processes, a no-op processor (ctx.acknowledge, confirming the
 * snapshot clean), settlement and budget release. The runtime runs in its own host process
 * (bench/lib/runtime-child.ts) with the bench families module; the clock runs from the start
 * command until no key of the backlog owes work any more (requested > handled or dirty > clean,
 * polled every 50 ms from this process). Worker processes are started lazily by the runtime, so
 * the figure "from start" includes their start-up; "after the first 10 %" excludes it.
 * Two shapes: W workers in one family, and 4 families sharing one supervisor (the same N and W
 * split evenly). graphile-worker runs the same jobs at the same concurrency (suite peer).
 */
import { median, printTable, progress, writeResult } from '../lib/report.ts';
import { openBenchDatabase } from '../lib/fixture.ts';
import { seedDirtyScopes } from '../lib/seed.ts';
import { BENCH_FAMILY_NAMES, benchBinding } from '../fixtures/families.ts';
import { call } from '../lib/children.ts';
import { forkRuntime, remainingWork, runtimeEnv, sleep, stopRuntime } from '../lib/runtime-host.ts';
import type { RuntimeStatus } from '../../src/runtime/runtime.ts';
import type { StatementCounts } from '../lib/count-statements.ts';
import type { Backend } from '../../src/store/types.ts';
import { runGraphileWorker, type PeerResult } from './peer.ts';

export interface DispatchOptions {
  backends: Backend[];
  invocations: number;
  workers: number;
  repeat: number;
  familyCounts: number[];
  peer: boolean;
}

export interface DispatchRow {
  backend: Backend;
  families: number;
  workersPerFamily: number;
  invocations: number;
  perSecond: number;
  steadyPerSecond: number;
  runs: Array<{ seconds: number; perSecond: number; steadyPerSecond: number; invocations: number; failures: number; workerProcesses: number }>;
}

function split(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

async function measureOnce(backend: Backend, families: number, workersPerFamily: number, invocations: number, repeat: number): Promise<DispatchRow> {
  const fx = await openBenchDatabase(backend);
  const names = BENCH_FAMILY_NAMES.slice(0, families);
  const bindings = names.map(benchBinding);
  const runs: DispatchRow['runs'] = [];
  try {
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
    });
    for (let rep = 0; rep < repeat; rep += 1) {
      if (rep > 0) {
        // Every key has ordinary work again; the schedule is due at once.
        const marks = bindings.map(() => '?').join(', ');
        await fx.exec(`UPDATE pc_artifact_processing_intents SET dirty_generation = dirty_generation + 1 WHERE binding_name IN (${marks})`, bindings);
        await fx.exec('UPDATE pc_artifact_processing_binding_states SET last_schedule_checkpoint_at = NULL');
      }
      const child = await forkRuntime(env, `dispatch-${backend}`);
      let status: RuntimeStatus | null = null;
      try {
        const t0 = performance.now();
        await call(child, { type: 'start' });
        let tenthAt = 0;
        const tenth = Math.ceil(invocations * 0.1);
        let lastReport = t0;
        for (;;) {
          const work = await remainingWork(fx, bindings);
          const left = work.dirty + work.owed;
          const now = performance.now();
          // The no-op processor confirms the snapshot clean in its acknowledgement: the dirty
          // count falls by one per acknowledged invocation.
          if (!tenthAt && work.dirty <= invocations - tenth) tenthAt = now;
          if (left === 0) break;
          if (now - lastReport > 5000) {
            progress(`dispatch ${backend} ${families} famil${families === 1 ? 'y' : 'ies'}: ${left.toLocaleString('en-US')} key marks left after ${((now - t0) / 1000).toFixed(1)} s`);
            lastReport = now;
          }
          if (now - t0 > 600_000) throw new Error(`dispatch ${backend}: backlog not drained after 600 s (${left} key marks left)`);
          await sleep(50);
        }
        const end = performance.now();
        status = (await call<{ status: RuntimeStatus }>(child, { type: 'status' })).status;
        if (process.env.APSUP_BENCH_DISPATCH_COUNT === '1') {
          const counts = await call<StatementCounts>(child, { type: 'counts' });
          const top = Object.entries(counts.byKind).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${(v / invocations).toFixed(2)}`).join(', ');
          progress(`dispatch ${backend}: host statements per invocation: ${(counts.total / invocations).toFixed(2)} (${top})`);
        }
        const seconds = (end - t0) / 1000;
        const done = status.families.reduce((s, f) => s + f.invocations, 0);
        const failures = status.families.reduce((s, f) => s + Object.values(f.failures).reduce((a, b) => a + b, 0), 0);
        const run = { seconds, perSecond: invocations / seconds, steadyPerSecond: (invocations - tenth) / ((end - (tenthAt || t0)) / 1000), invocations: done, failures, workerProcesses: families * workersPerFamily };
        runs.push(run);
        progress(`dispatch ${backend} ${families} famil${families === 1 ? 'y' : 'ies'} x ${workersPerFamily} workers: repetition ${rep + 1}/${repeat}: ${invocations.toLocaleString('en-US')} in ${seconds.toFixed(2)} s = ${Math.round(run.perSecond)}/s (after the first 10 %: ${Math.round(run.steadyPerSecond)}/s; invocations counted ${done}, failures ${failures})`);
      } finally {
        await stopRuntime(child);
      }
    }
  } finally {
    await fx.close();
  }
  return {
    backend, families, workersPerFamily, invocations,
    perSecond: median(runs.map((r) => r.perSecond)),
    steadyPerSecond: median(runs.map((r) => r.steadyPerSecond)),
    runs,
  };
}

export async function runDispatchSuite(options: DispatchOptions): Promise<{ rows: DispatchRow[]; peer: PeerResult | null }> {
  const rows: DispatchRow[] = [];
  for (const backend of options.backends) {
    for (const families of options.familyCounts) {
      const perFamily = Math.max(1, Math.ceil(options.workers / families));
      progress(`dispatch ${backend}: ${options.invocations.toLocaleString('en-US')} invocations, ${families} famil${families === 1 ? 'y' : 'ies'} x ${perFamily} workers`);
      rows.push(await measureOnce(backend, families, perFamily, options.invocations, options.repeat));
    }
  }
  let peer: PeerResult | null = null;
  if (options.peer) {
    progress(`peer: graphile-worker, ${options.invocations.toLocaleString('en-US')} no-op jobs, concurrency ${options.workers}`);
    peer = await runGraphileWorker(options.invocations, options.workers, options.repeat);
  }
  const ratio = (v: number, p: number | undefined) => (p ? `${(v / p).toFixed(2)}x` : 'n/a');
  printTable(
    `dispatch: ${options.invocations.toLocaleString('en-US')} no-op invocations end to end (median of ${options.repeat})`,
    ['system', 'backend', 'families x workers', 'invocations/s (from start)', 'after first 10 %', 'vs graphile-worker (from start)', 'vs graphile-worker (after 10 %)'],
    [
      ...rows.map((r) => ['supervisor', r.backend, `${r.families} x ${r.workersPerFamily}`, r.perSecond, r.steadyPerSecond,
        ratio(r.perSecond, peer?.ok ? peer.perSecond : undefined), ratio(r.steadyPerSecond, peer?.ok ? peer.steadyPerSecond : undefined)] as Array<string | number>),
      ...(peer?.ok ? [['graphile-worker', 'postgresql', `concurrency ${options.workers}`, peer.perSecond, peer.steadyPerSecond, '1.00x', '1.00x'] as Array<string | number>] : []),
    ],
  );
  if (peer && !peer.ok) console.log(`peer graphile-worker: skipped: ${peer.reason}`);
  console.log(`raw results: ${writeResult('dispatch', { invocations: options.invocations, workers: options.workers, rows, peer })}`);
  return { rows, peer };
}
