/**
 * latency: explicit trigger to worker start. Each trigger is a distinct scope of one family
 * (schedule off, so only explicit requests run); the record processor writes the time it
 * started (performance.timeOrigin + performance.now(), sub-millisecond and comparable across the
 * processes of this machine) with its acknowledgement; the trigger time is taken in the process
 * that accepts the request, just before the call. Triggers are sent open loop at a fixed pace
 * (default one every 40 ms, well below the capacity of the default budget of 4 workers, so the
 * figures are latency rather than queueing), after a warm-up that starts every worker process of
 * the budget. --repeat R: R consecutive rounds of the triggers against the same runtime (after one
 * warm-up); the table shows the median over the rounds of each percentile, and the p99 of every
 * trigger of all rounds pooled.
 * Paths:
 *   sqlite in-process    the host process accepts the request (runtime.trigger) and wakes the family
 *   sqlite other process a separate process commits the request (store.acceptRequest, what
 *                        `apsup trigger` runs); the runtime wakes on the file change (no polling)
 *   mysql api process    a separate role-api process accepts it; the role-background runtime
 *                        discovers it by its periodic poll (POLL_SECONDS, default 5)
 *   mysql in-process     role all, runtime.trigger
 */
import type { ChildProcess } from 'node:child_process';
import { median, printTable, progress, writeResult } from '../lib/report.ts';
import { openBenchDatabase, type BackendFixtureLike } from '../lib/fixture.ts';
import { call } from '../lib/children.ts';
import { createStartsTable, forkApi, forkRuntime, percentile, runtimeEnv, sleep, stopApi, stopRuntime } from '../lib/runtime-host.ts';
import type { Backend } from '../../src/store/types.ts';

export interface LatencyOptions {
  backends: Backend[];
  triggers: number;
  gapMs: number;
  workers: number;
  repeat: number;
  pollSeconds?: number;
}

type Path = 'in-process' | 'other process' | 'api process';

export interface LatencyRow {
  backend: Backend;
  path: Path;
  pollSeconds: number | null;
  /** Triggers whose start was seen, summed over the rounds. */
  triggers: number;
  repeat: number;
  /** Medians over the rounds. */
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** p99 of all triggers of all rounds together. */
  pooledP99: number;
  acceptMedianMs: number;
  rounds: Array<{ triggers: number; p50: number; p95: number; p99: number; max: number }>;
}

const FAMILY = 'bench-a';
const BINDING = 'bench.a';

async function startsOf(fx: BackendFixtureLike, prefix: string): Promise<Map<string, number>> {
  const rows = await fx.exec('SELECT scope_id, MIN(started_ms) AS started FROM bench_starts WHERE scope_id LIKE ? GROUP BY scope_id', [`${prefix}%`]);
  return new Map(rows.map((r) => [String(r.scope_id), Number(r.started)]));
}

async function waitStarts(fx: BackendFixtureLike, prefix: string, count: number, timeoutMs: number): Promise<Map<string, number>> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const starts = await startsOf(fx, prefix);
    if (starts.size >= count || performance.now() > deadline) return starts;
    await sleep(100);
  }
}

async function measurePath(backend: Backend, path: Path, options: LatencyOptions): Promise<LatencyRow> {
  const fx = await openBenchDatabase(backend);
  let runtime: ChildProcess | null = null;
  let api: ChildProcess | null = null;
  try {
    await createStartsTable(fx);
    const role = path === 'api process' ? 'background' : 'all';
    const pollSeconds = backend === 'mysql' ? (options.pollSeconds ?? 5) : null;
    runtime = await forkRuntime(
      runtimeEnv(fx.db.url, {
        APSUP_BENCH_FAMILIES: 1,
        APSUP_BENCH_PROCESSOR: 'record',
        APSUP_BENCH_MAX_WORKERS: options.workers,
        POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_ROLE: role,
        POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_POLL_SECONDS: pollSeconds ?? undefined,
      }),
      `latency-${backend}`,
    );
    await call(runtime, { type: 'start' });
    if (path !== 'in-process') api = await forkApi(fx.db.url, `latency-api-${backend}`);
    const trigger = (scope: string) =>
      api
        ? call<{ t0: number; t1: number }>(api, { type: 'trigger', binding: BINDING, scope })
        : call<{ t0: number; t1: number }>(runtime!, { type: 'trigger', family: FAMILY, scope });
    // Warm-up: one trigger per worker of the budget at once, so every worker process exists.
    await Promise.all(Array.from({ length: options.workers }, (_, i) => trigger(`warm-${i}`)));
    const warm = await waitStarts(fx, 'warm-', options.workers, 60_000);
    if (warm.size < options.workers) throw new Error(`latency ${backend} ${path}: warm-up did not complete`);
    const rounds: LatencyRow['rounds'] = [];
    const pooled: number[] = [];
    const acceptMs: number[] = [];
    for (let rep = 0; rep < options.repeat; rep += 1) {
      progress(
        `latency ${backend} ${path}: round ${rep + 1}/${options.repeat}: ${options.triggers} triggers, one every ${options.gapMs} ms${pollSeconds ? `, poll ${pollSeconds} s` : ''}`,
      );
      const prefix = `lat-${rep}-`;
      const sent: Array<Promise<{ t0: number; t1: number }>> = [];
      const begin = performance.now();
      let lastReport = begin;
      for (let i = 0; i < options.triggers; i += 1) {
        const due = begin + i * options.gapMs;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        sent.push(trigger(`${prefix}${i}`));
        if (performance.now() - lastReport > 5000) {
          lastReport = performance.now();
          progress(`latency ${backend} ${path}: round ${rep + 1}/${options.repeat}: ${i + 1} of ${options.triggers} triggers sent`);
        }
      }
      const accepted = await Promise.all(sent);
      const starts = await waitStarts(fx, prefix, options.triggers, 60_000 + (pollSeconds ?? 0) * 2000);
      const latencies: number[] = [];
      for (let i = 0; i < options.triggers; i += 1) {
        const started = starts.get(`${prefix}${i}`);
        if (started !== undefined) latencies.push(started - accepted[i].t0);
      }
      if (latencies.length < options.triggers)
        progress(`latency ${backend} ${path}: round ${rep + 1}: only ${latencies.length} of ${options.triggers} invocations started in time`);
      latencies.sort((a, b) => a - b);
      pooled.push(...latencies);
      acceptMs.push(...accepted.map((a) => a.t1 - a.t0));
      const round = {
        triggers: latencies.length,
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        p99: percentile(latencies, 99),
        max: latencies[latencies.length - 1],
      };
      rounds.push(round);
      progress(
        `latency ${backend} ${path}: round ${rep + 1}/${options.repeat}: p50 ${round.p50.toFixed(2)} ms, p95 ${round.p95.toFixed(2)} ms, p99 ${round.p99.toFixed(2)} ms`,
      );
    }
    pooled.sort((a, b) => a - b);
    const row: LatencyRow = {
      backend,
      path,
      pollSeconds: path === 'api process' ? pollSeconds : null,
      triggers: pooled.length,
      repeat: options.repeat,
      p50: median(rounds.map((r) => r.p50)),
      p95: median(rounds.map((r) => r.p95)),
      p99: median(rounds.map((r) => r.p99)),
      max: median(rounds.map((r) => r.max)),
      pooledP99: percentile(pooled, 99),
      acceptMedianMs: median(acceptMs),
      rounds,
    };
    return row;
  } finally {
    if (api) await stopApi(api);
    if (runtime) await stopRuntime(runtime);
    await fx.close();
  }
}

export async function runLatencySuite(options: LatencyOptions): Promise<LatencyRow[]> {
  const rows: LatencyRow[] = [];
  for (const backend of options.backends) {
    const paths: Path[] = backend === 'sqlite' ? ['in-process', 'other process'] : ['api process', 'in-process'];
    for (const path of paths) rows.push(await measurePath(backend, path, options));
  }
  printTable(
    `latency: explicit trigger to worker start, ${options.triggers.toLocaleString('en-US')} triggers per round one every ${options.gapMs} ms, budget ${options.workers} workers (ms; median of ${options.repeat} rounds)`,
    ['backend', 'trigger from', 'poll s', 'triggers (all rounds)', 'p50', 'p95', 'p99', 'max', 'p99 of all triggers', 'accept call median'],
    rows.map((r) => [
      r.backend,
      r.path,
      r.pollSeconds === null ? '-' : String(r.pollSeconds),
      String(r.triggers),
      r.p50.toFixed(2),
      r.p95.toFixed(2),
      r.p99.toFixed(2),
      r.max.toFixed(2),
      r.pooledP99.toFixed(2),
      r.acceptMedianMs.toFixed(2),
    ]),
  );
  console.log(`raw results: ${writeResult('latency', { ...options, rows })}`);
  return rows;
}
