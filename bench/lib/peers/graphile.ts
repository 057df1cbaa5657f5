/**
 * graphile-worker 0.17 as a peer (PostgreSQL, LISTEN/NOTIFY wake-up), in a fresh schema dropped
 * at close. Jobs run as async functions in this process.
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { Logger, makeWorkerUtils, run, runMigrations, type WorkerUtils } from 'graphile-worker';
import { PG_URL, postgresDown, postgresDurability } from './postgres.ts';
import { DrainClock, now, pacedLatency, type PeerOpen } from './types.ts';

const silent = new Logger(() => () => undefined);

export async function openGraphileWorker(maxConcurrency: number): Promise<PeerOpen> {
  const name = 'graphile-worker';
  const down = await postgresDown();
  if (down) return { ok: false, name, reason: down };
  const schema = `apsup_bench_gw_${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
  const pool = new pg.Pool({ connectionString: PG_URL, max: maxConcurrency + 4 });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  let utils: WorkerUtils;
  try {
    await runMigrations({ pgPool: pool, schema, logger: silent });
    utils = await makeWorkerUtils({ pgPool: pool, schema, logger: silent });
  } catch (error) {
    await pool.end().catch(() => undefined);
    return { ok: false, name, reason: `graphile-worker migrations failed (${(error as Error).message})` };
  }
  let onJob: (payload: { i?: number }) => void = () => undefined;
  const start = (concurrency: number) =>
    run({
      pgPool: pool,
      schema,
      concurrency,
      noHandleSignals: true,
      pollInterval: 1000,
      logger: silent,
      taskList: {
        noop: async (payload) => {
          onJob(payload as { i?: number });
        },
      },
    });
  return {
    ok: true,
    peer: {
      name,
      backend: 'postgresql',
      durability: await postgresDurability(pool),
      notes: 'LISTEN/NOTIFY wake-up, poll 1 s',
      async drain(jobs, concurrency) {
        for (let offset = 0; offset < jobs; offset += 2000) {
          const n = Math.min(2000, jobs - offset);
          await utils.addJobs(Array.from({ length: n }, (_, k) => ({ identifier: 'noop', payload: { i: offset + k } })));
        }
        const clock = new DrainClock(jobs, concurrency);
        onJob = () => clock.started();
        const runner = await start(concurrency);
        runner.events.on('job:success', () => clock.completed());
        await clock.finished;
        await runner.stop();
        return clock.result();
      },
      async submitRate(jobs) {
        const t0 = now();
        for (let i = 0; i < jobs; i += 1) await utils.addJob('noop', { i: -1 });
        const rate = jobs / ((now() - t0) / 1000);
        // The submitted jobs are not run: drop them.
        await pool.query(`DELETE FROM ${schema}._private_jobs`).catch(() => pool.query(`DELETE FROM ${schema}.jobs`));
        return rate;
      },
      async latency(triggers, gapMs, concurrency) {
        const starts = new Map<number, number>();
        onJob = (p) => {
          if (typeof p.i === 'number' && p.i >= 0) starts.set(p.i, now());
        };
        const runner = await start(concurrency);
        try {
          return await pacedLatency(
            triggers,
            gapMs,
            async (i) => {
              await utils.addJob('noop', { i });
            },
            starts,
          );
        } finally {
          await runner.stop();
        }
      },
      async close() {
        await Promise.resolve(utils.release()).catch(() => undefined);
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
        await pool.end();
      },
    },
  };
}
