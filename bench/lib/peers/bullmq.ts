/**
 * BullMQ 5 as a peer (Redis, blocking fetch). The durability shown is the Redis server's own
 * (appendonly/appendfsync and the RDB save schedule, read with CONFIG GET).
 */
import crypto from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { DrainClock, now, pacedLatency, redactUrl, type PeerOpen } from './types.ts';

export const REDIS_URL = process.env.APSUP_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function redisDurability(redis: Redis): Promise<string> {
  const get = async (key: string) => ((await redis.config('GET', key)) as string[])[1] ?? '?';
  const aof = await get('appendonly');
  const save = await get('save');
  const fsync = await get('appendfsync');
  const nothing = aof === 'no' && save.trim() === '' ? ' (nothing on disk)' : '';
  return `appendonly=${aof}${aof === 'yes' ? `, appendfsync=${fsync}` : ''}, save="${save}"${nothing}`;
}

export async function openBullmq(): Promise<PeerOpen> {
  const name = 'BullMQ';
  const probe = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 1, retryStrategy: () => null });
  probe.on('error', () => undefined);
  let durability: string;
  try {
    await probe.connect();
    await probe.ping();
    durability = await redisDurability(probe);
  } catch (error) {
    probe.disconnect();
    return { ok: false, name, reason: `Redis at ${redactUrl(REDIS_URL)} does not answer (${(error as Error).message})` };
  }
  probe.disconnect();
  const prefix = `apsup_bench_${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
  const connection = () => new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const conn = connection();
  const connections: Redis[] = [conn];
  const queues: Queue[] = [];
  let n = 0;
  const track = (r: Redis) => {
    connections.push(r);
    return r;
  };
  const newQueue = () => {
    const q = new Queue(`noop${(n += 1)}`, { connection: conn, prefix });
    queues.push(q);
    return q;
  };
  const worker = (q: Queue, concurrency: number, handle: (data: { i?: number }) => void) =>
    new Worker(
      q.name,
      async (job) => {
        handle(job.data as { i?: number });
      },
      { connection: track(connection()), prefix, concurrency, autorun: true, removeOnComplete: { count: 0 } },
    );
  return {
    ok: true,
    peer: {
      name,
      backend: 'redis',
      durability,
      notes: 'blocking fetch',
      async drain(jobs, concurrency) {
        const q = newQueue();
        for (let offset = 0; offset < jobs; offset += 2000) {
          const k = Math.min(2000, jobs - offset);
          await q.addBulk(Array.from({ length: k }, (_, j) => ({ name: 'noop', data: { i: offset + j }, opts: { removeOnComplete: true } })));
        }
        const clock = new DrainClock(jobs, concurrency);
        const w = worker(q, concurrency, () => clock.started());
        w.on('completed', () => clock.completed());
        await clock.finished;
        await w.close();
        return clock.result();
      },
      async submitRate(jobs) {
        const q = newQueue();
        const t0 = now();
        for (let i = 0; i < jobs; i += 1) await q.add('noop', { i }, { removeOnComplete: true });
        return jobs / ((now() - t0) / 1000);
      },
      async latency(triggers, gapMs, concurrency) {
        const q = newQueue();
        const starts = new Map<number, number>();
        const w = worker(q, concurrency, (d) => {
          if (typeof d.i === 'number') starts.set(d.i, now());
        });
        await w.waitUntilReady();
        try {
          return await pacedLatency(
            triggers,
            gapMs,
            async (i) => {
              await q.add('noop', { i }, { removeOnComplete: true });
            },
            starts,
          );
        } finally {
          await w.close();
        }
      },
      async close() {
        for (const q of queues) {
          await q.obliterate({ force: true }).catch(() => undefined);
          await q.close().catch(() => undefined);
        }
        for (const c of connections) c.disconnect();
      },
    },
  };
}
