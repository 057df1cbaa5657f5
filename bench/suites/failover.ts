/**
 * failover (MySQL/MariaDB): two candidate `apsup run --role background` processes with the bench
 * families module (record processor, explicit requests only) over a backlog of owed requests.
 * The leader (read from the lease row's holder id, which carries the pid) is killed with SIGKILL
 * at a random point of its renewal period; the clock runs from the kill until the first
 * invocation of the new term starts (the record processor writes its start time and term).
 * Also shown: kill -> new term acquired (lease acquired_at), and the lease TTL and renewal period
 * (POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_LEASE_TTL_SECONDS / _RENEW_SECONDS). After each
 * kill a replacement candidate is started, so every repetition has two candidates.
 * MySQL only (a SQLite database has one host, holding a permanent term: there is nothing to fail
 * over to); the command line refuses --backend sqlite. --scopes N sets the backlog (default 50,000),
 * --workers W the worker budget of each candidate (default 2).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { median, printTable, progress, writeResult } from '../lib/report.ts';
import { openBenchDatabase, type BackendFixtureLike } from '../lib/fixture.ts';
import { seedDirtyScopes } from '../lib/seed.ts';
import { track, waitExit } from '../lib/children.ts';
import { CLI_MAIN, FAMILIES_MODULE, benchLogFile, createStartsTable, runtimeEnv, sleep } from '../lib/runtime-host.ts';

const TSX = import.meta.resolve('tsx');

export interface FailoverOptions {
  ttlSeconds: number;
  renewSeconds: number;
  repeat: number;
  backlog: number;
  workers: number;
}

export interface FailoverRun {
  killedPid: number;
  oldGeneration: number;
  newGeneration: number;
  killToExpiryMs: number;
  killToAcquiredMs: number;
  killToFirstInvocationMs: number;
}

const wallNow = () => performance.timeOrigin + performance.now();
const dbMs = (v: unknown) => Date.parse(`${String(v).replace(' ', 'T')}Z`);

function startCandidate(env: NodeJS.ProcessEnv, index: number): ChildProcess {
  const log = fs.openSync(benchLogFile(`failover-candidate-${index}`), 'a');
  const child = spawn(process.execPath, ['--import', TSX, CLI_MAIN, 'run', '--role', 'background', '--families', FAMILIES_MODULE], {
    env: Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  return track(child);
}

async function lease(fx: BackendFixtureLike): Promise<{ holder: string | null; generation: number; expiresMs: number; acquiredMs: number; live: boolean }> {
  const rows = await fx.exec(
    "SELECT holder_id, supervisor_generation, expires_at, acquired_at, expires_at > UTC_TIMESTAMP(3) AS live FROM pc_artifact_processing_leases WHERE supervisor_key = 'global'",
  );
  const r = rows[0];
  if (!r) return { holder: null, generation: 0, expiresMs: 0, acquiredMs: 0, live: false };
  return {
    holder: (r.holder_id as string | null) ?? null,
    generation: Number(r.supervisor_generation),
    expiresMs: dbMs(r.expires_at),
    acquiredMs: dbMs(r.acquired_at),
    live: Number(r.live) === 1,
  };
}

async function firstStartOf(fx: BackendFixtureLike, generation: number): Promise<number | null> {
  const rows = await fx.exec('SELECT MIN(started_ms) AS t FROM bench_starts WHERE supervisor_generation = ?', [generation]);
  return rows[0]?.t === null || rows[0]?.t === undefined ? null : Number(rows[0].t);
}

async function until<T>(what: string, timeoutMs: number, fn: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (performance.now() > deadline) throw new Error(`failover: timed out waiting for ${what}`);
    await sleep(10);
  }
}

export async function runFailoverSuite(options: FailoverOptions): Promise<FailoverRun[]> {
  const fx = await openBenchDatabase('mysql');
  const candidates: ChildProcess[] = [];
  const runs: FailoverRun[] = [];
  try {
    await createStartsTable(fx);
    progress(`failover: seeding ${options.backlog.toLocaleString('en-US')} owed requests`);
    await seedDirtyScopes(fx, 'bench.a', options.backlog);
    await fx.exec('UPDATE pc_artifact_processing_intents SET requested_generation = 1, clean_generation = dirty_generation');
    await fx.exec('ANALYZE TABLE pc_artifact_processing_intents');
    const env = runtimeEnv(fx.db.url, {
      APSUP_BENCH_FAMILIES: 1,
      APSUP_BENCH_PROCESSOR: 'record',
      APSUP_BENCH_MAX_WORKERS: options.workers,
      POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: options.ttlSeconds,
      POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_RENEW_SECONDS: options.renewSeconds,
    });
    let index = 0;
    candidates.push(startCandidate(env, index++), startCandidate(env, index++));
    for (let rep = 0; rep < options.repeat; rep += 1) {
      // A leader that dispatches, and a second candidate alive next to it.
      const current = await until('a live leader', 60_000, async () => {
        const l = await lease(fx);
        return l.live && l.holder ? l : null;
      });
      await until('the leader dispatching', 60_000, () => firstStartOf(fx, current.generation));
      const pid = Number(current.holder!.split(':').at(-2));
      const victim = candidates.find((c) => c.pid === pid);
      if (!victim) throw new Error(`failover: the leader pid ${pid} is not one of the candidates`);
      await sleep(1000 + Math.random() * options.renewSeconds * 1000);
      const before = await lease(fx);
      const killedAt = wallNow();
      victim.kill('SIGKILL');
      candidates.splice(candidates.indexOf(victim), 1);
      const next = await until('a new term', (options.ttlSeconds + options.renewSeconds) * 1000 + 30_000, async () => {
        const l = await lease(fx);
        return l.generation > before.generation && l.holder && l.holder !== before.holder ? l : null;
      });
      const first = await until('the first invocation of the new term', 60_000, () => firstStartOf(fx, next.generation));
      const run: FailoverRun = {
        killedPid: pid,
        oldGeneration: before.generation,
        newGeneration: next.generation,
        killToExpiryMs: before.expiresMs - killedAt,
        killToAcquiredMs: next.acquiredMs - killedAt,
        killToFirstInvocationMs: first - killedAt,
      };
      runs.push(run);
      progress(
        `failover: repetition ${rep + 1}/${options.repeat}: killed pid ${pid} (generation ${before.generation}); old lease expired ${Math.round(run.killToExpiryMs)} ms after the kill, new term ${next.generation} acquired after ${Math.round(run.killToAcquiredMs)} ms, first invocation after ${Math.round(run.killToFirstInvocationMs)} ms`,
      );
      await waitExit(victim, 5_000);
      candidates.push(startCandidate(env, index++));
    }
  } finally {
    for (const c of candidates) c.kill('SIGTERM');
    await Promise.all(candidates.map((c) => waitExit(c, 15_000)));
    await fx.close();
  }
  const bound = (options.ttlSeconds + options.renewSeconds) * 1000;
  printTable(
    `failover (MariaDB): SIGKILL of the leader to the new leader's first invocation, TTL ${options.ttlSeconds} s, renewal every ${options.renewSeconds} s, ${options.backlog.toLocaleString('en-US')} owed requests, ${options.workers} workers per candidate (median of ${options.repeat})`,
    ['lease TTL s', 'renewal s', 'kill -> old lease expiry ms', 'kill -> new term ms', 'kill -> first invocation ms', 'worst ms', 'bound TTL + renewal ms'],
    [
      [
        options.ttlSeconds,
        options.renewSeconds,
        median(runs.map((r) => r.killToExpiryMs)),
        median(runs.map((r) => r.killToAcquiredMs)),
        median(runs.map((r) => r.killToFirstInvocationMs)),
        Math.max(...runs.map((r) => r.killToFirstInvocationMs)),
        bound,
      ],
    ],
  );
  console.log(`raw results: ${writeResult('failover', { ...options, runs })}`);
  return runs;
}
