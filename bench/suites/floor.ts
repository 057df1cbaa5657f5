/**
 * floor: the hardware bound of the supervisor's transaction shapes, run without the supervisor
 * on the same backend, connection settings and process layout (bench/suites/floor-child.ts):
 *   single-row commits   W processes, each: BEGIN; UPDATE its own row; COMMIT          (floor of `fence` unfenced)
 *   fenced single-row    W processes, each: BEGIN; SELECT its fence row (one of 32) FOR UPDATE;
 *                        UPDATE its own row; COMMIT                                   (floor of `fence` fenced)
 *   page updates         one process: BEGIN; UPDATE 500 rows by primary key range; COMMIT, over a
 *                        plain table of P rows (default 100,000, the size both scan backends run) (floor of `scan`)
 *   intent page updates  the same over P seeded rows of pc_artifact_processing_intents, writing what an
 *                        admission writes (requested_generation + 1, scan mark, updated_at), so the
 *                        table's own indexes are paid but none of the operation's logic; an untimed
 *                        pass (handled := requested) resets the owed flag between repetitions
 *   dispatch round trip  D processes (D = the dispatch suite's worker budget, default 4): this process
 *                        sends a message over the fork IPC channel (JSON, as the worker pool does), the
 *                        worker runs the fenced single-row commit above and replies; one message in flight
 *                        per process (floor of `dispatch`: the least a no-op invocation needs is a dispatch
 *                        message, one fenced durable commit, its acknowledgement, and a reply)
 *   IPC round trip       the same without the commit (shown for reference: the process/IPC part alone)
 *                        (both round-trip shapes measure for half of --duration: thousands of round trips)
 * Then every supervisor throughput (scan, fence, dispatch) as a fraction of its floor: from the
 * runs of this invocation (`all`), or else from the latest scan-*.json, fence-*.json and
 * dispatch-*.json in the results directory (the source is printed).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import type { Backend } from '../../src/store/types.ts';
import { forkReady, request, track } from '../lib/children.ts';
import { openBenchDatabase, type BackendFixtureLike } from '../lib/fixture.ts';
import { latestResult, median, printTable, progress, writeResult } from '../lib/report.ts';
import { seedDirtyScopes } from '../lib/seed.ts';
import type { ScanRun } from './scan.ts';
import type { FenceRow } from './fence.ts';
import type { DispatchRow } from './dispatch.ts';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'floor-child.ts');

export interface FloorOptions {
  backends: Backend[];
  workers: number;
  repeat: number;
  durationMs: number;
  pageRows: number;
  pageSize: number;
  /** Processes of the dispatch round-trip shapes (the dispatch suite's worker budget). */
  dispatchWorkers: number;
  scan?: ScanRun[];
  fence?: FenceRow[];
  dispatch?: DispatchRow[];
}

export interface FloorRow {
  backend: Backend;
  workers: number;
  single: number;
  fenced: number;
  pageRowsPerSecond: number;
  intentPageRowsPerSecond: number;
  pageRows: number;
  dispatchWorkers: number;
  dispatchRoundTrips: number;
  ipcRoundTrips: number;
  singleRuns: number[];
  fencedRuns: number[];
  pageRuns: number[];
  intentPageRuns: number[];
  dispatchRuns: number[];
  ipcRuns: number[];
}

/** Round trips per second: one message in flight per child, each answered by ack, for durationMs. */
async function roundTrips(children: ChildProcess[], fenced: boolean, durationMs: number): Promise<number> {
  const started = performance.now();
  const deadline = started + durationMs;
  let total = 0;
  await Promise.all(
    children.map(
      (c, i) =>
        new Promise<void>((resolve) => {
          let n = 0;
          const on = (m: { type: string }) => {
            if (m.type !== 'ack') return;
            total += 1;
            if (performance.now() < deadline) c.send({ type: 'inv', fenced, row: i, slot: i % 32, n: ++n });
            else {
              c.off('message', on);
              resolve();
            }
          };
          c.on('message', on);
          c.send({ type: 'inv', fenced, row: i, slot: i % 32, n: ++n });
        }),
    ),
  );
  return total / ((performance.now() - started) / 1000);
}

async function createTables(fx: BackendFixtureLike, workers: number, pageRows: number): Promise<void> {
  const mysql = fx.backend === 'mysql';
  const engine = mysql ? ' ENGINE = InnoDB' : '';
  await fx.exec(`CREATE TABLE bench_floor_rows (id INTEGER NOT NULL PRIMARY KEY, v BIGINT NOT NULL DEFAULT 0)${engine}`);
  await fx.exec(`CREATE TABLE bench_floor_fence (slot INTEGER NOT NULL PRIMARY KEY, holder_id VARCHAR(128) NOT NULL, generation BIGINT NOT NULL)${engine}`);
  await fx.exec(`CREATE TABLE bench_floor_pages (id INTEGER NOT NULL PRIMARY KEY, v BIGINT NOT NULL DEFAULT 0)${engine}`);
  for (let i = 0; i < workers; i += 1) await fx.exec('INSERT INTO bench_floor_rows (id, v) VALUES (?, 0)', [i]);
  for (let s = 0; s < 32; s += 1) await fx.exec('INSERT INTO bench_floor_fence (slot, holder_id, generation) VALUES (?, ?, 1)', [s, 'bench-floor']);
  const digits =
    '(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';
  for (let offset = 0; offset < pageRows; offset += 100_000) {
    const n = Math.min(100_000, pageRows - offset);
    await fx.exec(
      `INSERT INTO bench_floor_pages (id, v) SELECT n + ?, 0 FROM (
      SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n
        FROM ${digits} a CROSS JOIN ${digits} b CROSS JOIN ${digits} c CROSS JOIN ${digits} e CROSS JOIN ${digits} f) numbers WHERE n < ?`,
      [offset + 1, n],
    );
  }
}

export async function runFloorSuite(options: FloorOptions): Promise<FloorRow[]> {
  const rows: FloorRow[] = [];
  for (const backend of options.backends) {
    const fx = await openBenchDatabase(backend);
    const children: ChildProcess[] = [];
    try {
      const processes = Math.max(options.workers, options.dispatchWorkers);
      await createTables(fx, processes, options.pageRows);
      await seedDirtyScopes(fx, 'bench-floor', options.pageRows);
      await fx.exec(backend === 'mysql' ? 'ANALYZE TABLE pc_artifact_processing_intents' : 'ANALYZE');
      const [bounds] = await fx.exec(
        "SELECT MIN(pending_sequence) AS lo, MAX(pending_sequence) AS hi FROM pc_artifact_processing_intents WHERE binding_name = 'bench-floor'",
      );
      const now = backend === 'mysql' ? 'UTC_TIMESTAMP(3)' : "strftime('%Y-%m-%d %H:%M:%f', 'now')";
      const intentAdmit = `UPDATE pc_artifact_processing_intents SET requested_generation = requested_generation + 1, last_auto_scan_generation = last_auto_scan_generation + 1, last_auto_scan_page = last_auto_scan_page + 1, updated_at = ${now} WHERE pending_sequence BETWEEN ? AND ?`;
      const intentReset = 'UPDATE pc_artifact_processing_intents SET handled_generation = requested_generation WHERE pending_sequence BETWEEN ? AND ?';
      progress(`floor ${backend}: starting ${processes} plain worker processes`);
      for (let i = 0; i < processes; i += 1) children.push(track(await forkReady(CHILD, { APSUP_BENCH_DATABASE_URL: fx.db.url })));
      const commitChildren = children.slice(0, options.workers);
      const dispatchChildren = children.slice(0, options.dispatchWorkers);
      const dispatchRuns: number[] = [];
      const ipcRuns: number[] = [];
      const singleRuns: number[] = [];
      const fencedRuns: number[] = [];
      const pageRuns: number[] = [];
      const intentPageRuns: number[] = [];
      // Untimed warm-up of both commit shapes, as in the fence suite.
      for (const shape of ['fenced', 'single'] as const) {
        await Promise.all(
          commitChildren.map((c, i) => request(c, { type: 'go', shape, durationMs: Math.max(200, options.durationMs / 4), row: i, slot: i % 32 }, 'done')),
        );
      }
      await roundTrips(dispatchChildren, true, Math.max(200, options.durationMs / 4));
      for (let rep = 0; rep < options.repeat; rep += 1) {
        for (const shape of rep % 2 === 0 ? (['fenced', 'single'] as const) : (['single', 'fenced'] as const)) {
          const results = await Promise.all(
            commitChildren.map((c, i) => request<{ commits: number }>(c, { type: 'go', shape, durationMs: options.durationMs, row: i, slot: i % 32 }, 'done')),
          );
          const perSecond = results.reduce((s, r) => s + r.commits, 0) / (options.durationMs / 1000);
          (shape === 'fenced' ? fencedRuns : singleRuns).push(perSecond);
          progress(`floor ${backend}: repetition ${rep + 1}/${options.repeat} ${shape}: ${Math.round(perSecond)} commits/s`);
        }
        for (const fenced of rep % 2 === 0 ? [true, false] : [false, true]) {
          const perSecond = await roundTrips(dispatchChildren, fenced, options.durationMs / 2);
          (fenced ? dispatchRuns : ipcRuns).push(perSecond);
          progress(
            `floor ${backend}: repetition ${rep + 1}/${options.repeat} ${fenced ? 'dispatch round trips (IPC + fenced commit)' : 'IPC round trips'} with ${dispatchChildren.length} processes: ${Math.round(perSecond)}/s`,
          );
        }
        const page = await request<{ rows: number; seconds: number }>(
          children[0],
          { type: 'page', from: 1, to: options.pageRows, size: options.pageSize, sql: 'UPDATE bench_floor_pages SET v = v + 1 WHERE id BETWEEN ? AND ?' },
          'done',
        );
        pageRuns.push(page.rows / page.seconds);
        const lo = Number(bounds.lo);
        const hi = Number(bounds.hi);
        const intents = await request<{ rows: number; seconds: number }>(
          children[0],
          { type: 'page', from: lo, to: hi, size: options.pageSize, sql: intentAdmit },
          'done',
        );
        await request(children[0], { type: 'page', from: lo, to: hi, size: options.pageSize, sql: intentReset }, 'done');
        intentPageRuns.push(intents.rows / intents.seconds);
        progress(
          `floor ${backend}: repetition ${rep + 1}/${options.repeat} page updates: ${Math.round(page.rows / page.seconds)} rows/s plain, ${Math.round(intents.rows / intents.seconds)} rows/s on the intents table`,
        );
      }
      rows.push({
        backend,
        workers: options.workers,
        single: median(singleRuns),
        fenced: median(fencedRuns),
        pageRowsPerSecond: median(pageRuns),
        intentPageRowsPerSecond: median(intentPageRuns),
        pageRows: options.pageRows,
        dispatchWorkers: options.dispatchWorkers,
        dispatchRoundTrips: median(dispatchRuns),
        ipcRoundTrips: median(ipcRuns),
        singleRuns,
        fencedRuns,
        pageRuns,
        intentPageRuns,
        dispatchRuns,
        ipcRuns,
      });
    } finally {
      for (const c of children) c.send({ type: 'exit' });
      await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
      await fx.close();
    }
  }
  printTable(
    `floor: raw transaction shapes without the supervisor (median of ${options.repeat}; commits with ${options.workers} processes x ${options.durationMs} ms; pages of ${options.pageSize} over ${options.pageRows.toLocaleString('en-US')} rows; round trips with ${options.dispatchWorkers} processes x ${options.durationMs / 2} ms)`,
    [
      'backend',
      'single-row commits/s',
      'fenced single-row commits/s',
      'page update rows/s',
      'intent page update rows/s',
      'dispatch round trips/s (IPC + fenced commit)',
      'IPC round trips/s',
    ],
    rows.map((r) => [r.backend, r.single, r.fenced, r.pageRowsPerSecond, r.intentPageRowsPerSecond, r.dispatchRoundTrips, r.ipcRoundTrips]),
  );
  const fractions = printFloorFractions(rows, options);
  console.log(`raw results: ${writeResult('floor', { options: { ...options, scan: undefined, fence: undefined, dispatch: undefined }, ...fractions, rows })}`);
  return rows;
}

/**
 * Every supervisor throughput as a fraction of its floor. Figures from this invocation when given
 * (`all`), else from the latest raw results of scan, fence and dispatch.
 */
export function printFloorFractions(
  rows: FloorRow[],
  given: { scan?: ScanRun[]; fence?: FenceRow[]; dispatch?: DispatchRow[] },
): { sources: Record<string, string>; fractions: Array<Record<string, unknown>> } {
  const sources: Record<string, string> = {};
  const pick = <T>(suite: string, value: T | undefined, extract: (data: unknown) => T): T | undefined => {
    if (value) {
      sources[suite] = 'this run';
      return value;
    }
    const l = latestResult<unknown>(suite);
    sources[suite] = l ? l.file : 'none';
    return l ? extract(l.data) : undefined;
  };
  const scan = pick('scan', given.scan, (d) => d as ScanRun[]);
  const fence = pick('fence', given.fence, (d) => d as FenceRow[]);
  const dispatch = pick('dispatch', given.dispatch, (d) => (d as { rows: DispatchRow[] }).rows);
  const fractions: Array<Record<string, unknown>> = [];
  const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(1)} %`;
  const table: Array<Array<string | number>> = [];
  const add = (backend: Backend, what: string, value: number, floorName: string, floor: number, extra: Record<string, unknown> = {}) => {
    table.push([backend, what, value, floorName, floor, pct(value, floor)]);
    fractions.push({ backend, what, floorName, value, floor, fraction: value / floor, ...extra });
  };
  for (const r of rows) {
    const scans = (scan ?? []).filter((s) => s.backend === r.backend);
    const s = scans.find((x) => x.scopes === r.pageRows) ?? [...scans].sort((a, b) => Math.abs(a.scopes - r.pageRows) - Math.abs(b.scopes - r.pageRows))[0];
    if (s) {
      add(r.backend, `scan at ${s.scopes.toLocaleString('en-US')} scopes (admitted/s)`, s.perSecond, 'page update rows/s', r.pageRowsPerSecond, {
        scopes: s.scopes,
      });
      add(r.backend, `scan at ${s.scopes.toLocaleString('en-US')} scopes (admitted/s)`, s.perSecond, 'intent page update rows/s', r.intentPageRowsPerSecond, {
        scopes: s.scopes,
      });
    }
    const f = (fence ?? []).find((x) => x.backend === r.backend);
    if (f) {
      const note = f.workers === r.workers ? '' : ` (fence ran ${f.workers} workers)`;
      add(r.backend, `fence fenced commits/s${note}`, f.fenced, 'fenced single-row commits/s', r.fenced);
      add(r.backend, `fence unfenced commits/s${note}`, f.unfenced, 'single-row commits/s', r.single);
    }
    for (const d of (dispatch ?? []).filter((x) => x.backend === r.backend)) {
      const workers = d.families * d.workersPerFamily;
      const note = workers === r.dispatchWorkers ? '' : ` (dispatch ran ${workers} workers)`;
      const what = `dispatch ${d.families} x ${d.workersPerFamily}, ${d.invocations.toLocaleString('en-US')} invocations`;
      add(r.backend, `${what} (from start)${note}`, d.perSecond, `dispatch round trips/s (${r.dispatchWorkers} processes)`, r.dispatchRoundTrips, {
        families: d.families,
      });
      add(r.backend, `${what} (after first 10 %)${note}`, d.steadyPerSecond, `dispatch round trips/s (${r.dispatchWorkers} processes)`, r.dispatchRoundTrips, {
        families: d.families,
      });
    }
  }
  printTable(
    `floor: supervisor figures as fractions of their floors (scan from ${sources.scan}, fence from ${sources.fence}, dispatch from ${sources.dispatch})`,
    ['backend', 'supervisor figure', 'value', 'floor', 'floor value', 'fraction'],
    table,
  );
  console.log(
    'dispatch floor: per invocation one message over the fork IPC channel to one of the worker processes, one fenced single-row commit there (BEGIN; SELECT its fence row FOR UPDATE; UPDATE its row; COMMIT) and a reply, one in flight per process, no supervisor. A fraction above 100 % would mean the supervisor does less per invocation than that (e.g. acknowledgements batched across invocations).',
  );
  return { sources, fractions };
}
