/**
 * pg-boss 10 as a peer (PostgreSQL, polling). Its workers fetch in batches and sleep for the
 * polling interval (at least 0.5 s) after each fetch, so throughput is concurrency x batch size
 * per interval: the suites use concurrency workers of batch BATCH (100, the setting).
 */
import crypto from 'node:crypto';
import PgBoss from 'pg-boss';
import pg from 'pg';
import { PG_URL, postgresDown, postgresDurability } from './postgres.ts';
import { DrainClock, now, pacedLatency, type PeerOpen } from './types.ts';

const BATCH = 100;
const POLL_SECONDS = 0.5;

export async function openPgBoss(maxConcurrency: number): Promise<PeerOpen> {
  const name = 'pg-boss';
  const down = await postgresDown();
  if (down) return { ok: false, name, reason: down };
  const schema = `apsup_bench_pb_${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
  const boss = new PgBoss({ connectionString: PG_URL, schema, max: maxConcurrency + 4, supervise: false, schedule: false });
  boss.on('error', () => undefined);
  const pool = new pg.Pool({ connectionString: PG_URL, max: 2 });
  pool.on('error', () => undefined);
  let queue = 0;
  try {
    await boss.start();
  } catch (error) {
    await pool.end().catch(() => undefined);
    return { ok: false, name, reason: `pg-boss start failed (${(error as Error).message})` };
  }
  // A fresh queue per run: nothing of an earlier run is fetched.
  const newQueue = async () => {
    const q = `noop${(queue += 1)}`;
    await boss.createQueue(q);
    return q;
  };
  const work = async (q: string, concurrency: number, handle: (data: { i?: number }) => void) => {
    for (let w = 0; w < concurrency; w += 1) {
      await boss.work<{ i?: number }>(q, { batchSize: BATCH, pollingIntervalSeconds: POLL_SECONDS }, async (jobs) => {
        for (const j of jobs) handle(j.data);
      });
    }
  };
  return {
    ok: true,
    peer: {
      name,
      backend: 'postgresql',
      durability: await postgresDurability(pool),
      notes: `${BATCH} jobs per fetch, poll ${POLL_SECONDS} s`,
      async drain(jobs, concurrency) {
        const q = await newQueue();
        for (let offset = 0; offset < jobs; offset += 2000) {
          const n = Math.min(2000, jobs - offset);
          await boss.insert(Array.from({ length: n }, (_, k) => ({ name: q, data: { i: offset + k } })));
        }
        const clock = new DrainClock(jobs, concurrency);
        // The first fetch is the first claim (a batch runs in one handler call); completion is the
        // handler's return, after which pg-boss marks the batch completed.
        clock.started();
        await work(q, concurrency, () => clock.completed());
        await clock.finished;
        await boss.offWork(q);
        return clock.result();
      },
      async submitRate(jobs) {
        const q = await newQueue();
        const t0 = now();
        for (let i = 0; i < jobs; i += 1) await boss.send(q, { i });
        return jobs / ((now() - t0) / 1000);
      },
      async latency(triggers, gapMs, concurrency) {
        const q = await newQueue();
        const starts = new Map<number, number>();
        await work(q, concurrency, (d) => {
          if (typeof d.i === 'number') starts.set(d.i, now());
        });
        try {
          return await pacedLatency(
            triggers,
            gapMs,
            async (i) => {
              await boss.send(q, { i });
            },
            starts,
          );
        } finally {
          await boss.offWork(q);
        }
      },
      async close() {
        await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
        await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
        await pool.end();
      },
    },
  };
}
