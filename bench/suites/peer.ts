/**
 * peer: graphile-worker (a PostgreSQL job queue, devDependency used only here) running the same
 * number of no-op jobs at the same concurrency, on the local PostgreSQL
 * (APSUP_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/test), in a fresh schema that is
 * dropped afterwards. Jobs are added in bulk before the runner starts (not measured), like the
 * supervisor's seeded backlog; the clock runs from run() until the last job:success event.
 * graphile-worker runs jobs in its own process (async functions), the supervisor in worker
 * processes: the ratio is the price of process isolation plus fencing, not of the queue alone.
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { Logger, makeWorkerUtils, run, runMigrations } from 'graphile-worker';
import { median, printTable, progress, writeResult } from '../lib/report.ts';

export const PG_URL = process.env.APSUP_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export type PeerRun = { jobs: number; concurrency: number; seconds: number; perSecond: number; steadyPerSecond: number };
export type PeerResult = { ok: true; runs: PeerRun[]; perSecond: number; steadyPerSecond: number } | { ok: false; reason: string };

const silent = new Logger(() => () => undefined);

/** Whether PostgreSQL answers; the reason when it does not. */
export async function postgresAnswers(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return `PostgreSQL at ${PG_URL.replace(/:[^:@/]*@/, ':***@')} does not answer (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function oneRun(pool: pg.Pool, schema: string, jobs: number, concurrency: number): Promise<PeerRun> {
  const utils = await makeWorkerUtils({ pgPool: pool, schema, logger: silent });
  try {
    for (let offset = 0; offset < jobs; offset += 2000) {
      const n = Math.min(2000, jobs - offset);
      await utils.addJobs(Array.from({ length: n }, (_, i) => ({ identifier: 'noop', payload: { scope: `scope-${offset + i}` } })));
    }
  } finally {
    await utils.release();
  }
  let done = 0;
  let tenth = 0;
  const t0 = performance.now();
  const runner = await run({
    pgPool: pool,
    schema,
    concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    logger: silent,
    taskList: { noop: async () => undefined },
  });
  await new Promise<void>((resolve) => {
    runner.events.on('job:success', () => {
      done += 1;
      if (done === Math.ceil(jobs / 10)) tenth = performance.now();
      if (done === jobs) resolve();
    });
  });
  const end = performance.now();
  await runner.stop();
  const seconds = (end - t0) / 1000;
  return { jobs, concurrency, seconds, perSecond: jobs / seconds, steadyPerSecond: (jobs - Math.ceil(jobs / 10)) / ((end - tenth) / 1000) };
}

export interface PeerSession {
  run(jobs: number): Promise<PeerRun>;
  close(): Promise<void>;
}

/** A graphile-worker schema ready for runs (so the dispatch suite can interleave them with its own); never throws for a missing server. */
export async function openPeer(concurrency: number): Promise<{ ok: true; session: PeerSession } | { ok: false; reason: string }> {
  const down = await postgresAnswers();
  if (down) return { ok: false, reason: down };
  const schema = `apsup_bench_gw_${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: PG_URL, max: concurrency + 4 });
  pool.on('error', (error) => progress(`peer: idle PostgreSQL client error: ${error.message}`));
  pool.on('connect', (client) => {
    client.on('error', (error) => progress(`peer: PostgreSQL client error: ${error.message}`));
  });
  try {
    await runMigrations({ pgPool: pool, schema, logger: silent });
  } catch (error) {
    await pool.end().catch(() => undefined);
    return { ok: false, reason: `graphile-worker migrations failed (${(error as Error).message})` };
  }
  return {
    ok: true,
    session: {
      run: (jobs) => oneRun(pool, schema, jobs, concurrency),
      async close() {
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
        await pool.end();
      },
    },
  };
}

export function peerResult(runs: PeerRun[]): PeerResult {
  return { ok: true, runs, perSecond: median(runs.map((r) => r.perSecond)), steadyPerSecond: median(runs.map((r) => r.steadyPerSecond)) };
}

/** Runs graphile-worker `repeat` times over `jobs` no-op jobs with `concurrency`; never throws for a missing server. */
export async function runGraphileWorker(jobs: number, concurrency: number, repeat: number): Promise<PeerResult> {
  const peer = await openPeer(concurrency);
  if (!peer.ok) return peer;
  const runs: PeerRun[] = [];
  try {
    for (let rep = 0; rep < repeat; rep += 1) {
      const r = await peer.session.run(jobs);
      runs.push(r);
      progress(
        `peer graphile-worker: repetition ${rep + 1}/${repeat}: ${Math.round(r.perSecond).toLocaleString('en-US')} jobs/s (${jobs.toLocaleString('en-US')} jobs, concurrency ${concurrency})`,
      );
    }
  } finally {
    await peer.session.close();
  }
  return peerResult(runs);
}

/** `npm run bench -- peer`: graphile-worker alone (the dispatch suite runs it next to the supervisor). */
export async function runPeerSuite(options: { jobs: number; workers: number; repeat: number }): Promise<void> {
  progress(`peer: graphile-worker, ${options.jobs.toLocaleString('en-US')} no-op jobs, concurrency ${options.workers}`);
  const result = await runGraphileWorker(options.jobs, options.workers, options.repeat);
  if (!result.ok) {
    console.log(`\npeer: skipped: ${result.reason}`);
    console.log(`raw results: ${writeResult('peer', result)}`);
    return;
  }
  printTable(
    `peer: graphile-worker ${options.jobs.toLocaleString('en-US')} no-op jobs, concurrency ${options.workers} (median of ${options.repeat})`,
    ['peer', 'jobs', 'jobs/s (from start)', 'jobs/s (after first 10 %)'],
    [['graphile-worker', options.jobs, result.perSecond, result.steadyPerSecond]],
  );
  console.log(`raw results: ${writeResult('peer', result)}`);
}
