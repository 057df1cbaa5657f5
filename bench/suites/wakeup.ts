/**
 * wakeup (issue 12 item 6): cross-process trigger->start and submit->start on MariaDB, without
 * and with the Redis wake-up channel (POWERCONTEXT_SERVER_RUNTIME_NOTIFY_REDIS_URL), same run.
 * A real `apsup run --role background` host (bench families, record processor: it writes its
 * start time with its acknowledgement; the fixture task registry's fx-quick tasks); this process
 * plays the api process: it commits each request (store.acceptRequest) or task
 * (TaskStore.submit) and, with the channel, publishes its id after the commit, as Runtime.trigger
 * and TaskService do. Default polls (POLL_SECONDS 5, WAKEUP_POLL_MS 500). trigger->start: the
 * processor's start time (sub-ms wall clock) minus the time taken just before the call;
 * submit->start: the attempt's started_at (database clock, ms) minus the same. Self-contained:
 * `npx tsx bench/suites/wakeup.ts [--triggers N] [--tasks N] [--gap-ms G] [--task-gap-ms T]`. Nothing is asserted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createEphemeralDatabase } from '../../src/devtools/ephemeral-database.ts';
import { createLogger } from '../../src/logging.ts';
import { NotifyChannel, notifyNamespace } from '../../src/notify/channel.ts';
import { parseNotifyConfig } from '../../src/notify/config.ts';
import { openStore } from '../../src/store/open.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { dbTime } from '../../src/store/rows.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { machineInfo, printTable, progress, writeResult } from '../lib/report.ts';
import { benchLogFile, percentile, sleep } from '../lib/runtime-host.ts';

const REDIS = 'redis://127.0.0.1:6379/0';
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

function stats(values: number[]) {
  const v = [...values].sort((a, b) => a - b);
  return { n: v.length, p50: percentile(v, 50), p95: percentile(v, 95), p99: percentile(v, 99), max: v[v.length - 1] ?? NaN };
}

async function measure(channelOn: boolean, triggers: number, taskCount: number, gapMs: number, taskGapMs: number) {
  const db = await createEphemeralDatabase('mysql', { prefix: 'apsup_bench', mysqlAdminUrl: process.env.APSUP_TEST_MYSQL_URL });
  const store = openStore(db.target) as BaseStore;
  const tasks = new TaskStore(store);
  await store.domainQuery(
    'CREATE TABLE bench_starts (id BIGINT AUTO_INCREMENT PRIMARY KEY, scope_id VARCHAR(191) NOT NULL, started_ms DOUBLE NOT NULL, holder_id VARCHAR(128) NOT NULL, supervisor_generation BIGINT NOT NULL, KEY ix_bench_starts_scope (scope_id)) ENGINE = InnoDB',
  );
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('POWERCONTEXT_SERVER_RUNTIME_')) env[k] = v;
  Object.assign(env, {
    POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: db.url,
    POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: path.join(ROOT, 'test/fixtures/tasks/registry.ts'),
    POWERCONTEXT_SERVER_RUNTIME_OBSERVABILITY_ADDRESS: 'off',
    APSUP_BENCH_PROCESSOR: 'record',
    APSUP_BENCH_MAX_WORKERS: '4',
    ...(channelOn ? { POWERCONTEXT_SERVER_RUNTIME_NOTIFY_REDIS_URL: REDIS } : {}),
  });
  const log = fs.openSync(benchLogFile(`wakeup-${channelOn ? 'on' : 'off'}`), 'w');
  const host: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'run', '--role', 'background', '--families', 'bench/fixtures/families.ts'],
    { cwd: ROOT, env, stdio: ['ignore', log, log] },
  );
  const publisher = channelOn
    ? new NotifyChannel(
        parseNotifyConfig({ POWERCONTEXT_SERVER_RUNTIME_NOTIFY_REDIS_URL: REDIS })!,
        notifyNamespace(db.target),
        createLogger({ level: 'silent' }),
        { subscribe: false },
      )
    : null;
  await publisher?.start();
  const trigger = async (scope: string) => {
    const t0 = performance.timeOrigin + performance.now();
    const intent = await store.acceptRequest('bench.a', scope);
    publisher?.publish('request', `bench-a\t${intent.pendingSequence}`);
    return t0;
  };
  const starts = async (prefix: string) =>
    new Map(
      (await store.domainQuery('SELECT scope_id, MIN(started_ms) AS s FROM bench_starts WHERE scope_id LIKE ? GROUP BY scope_id', [`${prefix}%`])).map((r) => [
        String(r.scope_id),
        Number(r.s),
      ]),
    );
  try {
    for (;;) {
      const lease = await store.readLease('global');
      if (lease.live) break;
      if (host.exitCode !== null) throw new Error('the host exited; see its log');
      await sleep(200);
    }
    // Warm-up: every worker of the budget started once; a first task too.
    await Promise.all([0, 1, 2, 3].map((i) => trigger(`warm-${i}`)));
    for (let t = 0; (await starts('warm-')).size < 4; t++) {
      if (t > 600) throw new Error('warm-up did not complete');
      await sleep(100);
    }
    const warmTask = await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 });
    for (let t = 0; (await tasks.read(warmTask.taskId))?.startedAt === null; t++) {
      if (t > 600) throw new Error('task warm-up did not complete');
      await sleep(100);
    }

    progress(`wakeup ${channelOn ? 'with' : 'without'} the channel: ${triggers} triggers, one every ${gapMs} ms`);
    const sent = new Map<string, number>();
    for (let i = 0; i < triggers; i++) {
      sent.set(`t-${i}`, await trigger(`t-${i}`));
      await sleep(gapMs);
    }
    let seen = new Map<string, number>();
    for (let t = 0; t < 300 && seen.size < triggers; t++) {
      seen = await starts('t-');
      await sleep(100);
    }
    const triggerLat = [...sent].filter(([s]) => seen.has(s)).map(([s, t0]) => seen.get(s)! - t0);

    progress(`wakeup ${channelOn ? 'with' : 'without'} the channel: ${taskCount} tasks, one every ${taskGapMs} ms`);
    const submitted: Array<{ id: number; t0: number }> = [];
    for (let i = 0; i < taskCount; i++) {
      const t0 = Date.now();
      const r = await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 });
      publisher?.publish('task', String(r.taskId));
      submitted.push({ id: r.taskId, t0 });
      await sleep(taskGapMs);
    }
    const taskLat: number[] = [];
    for (const s of submitted) {
      for (let t = 0; t < 300; t++) {
        const task = await tasks.read(s.id);
        if (task?.startedAt) {
          taskLat.push(task.startedAt.getTime() - s.t0);
          break;
        }
        await sleep(100);
      }
    }
    void dbTime;
    return { channel: channelOn, trigger: stats(triggerLat), submit: stats(taskLat) };
  } finally {
    host.kill('SIGTERM');
    await new Promise((r) => {
      if (host.exitCode !== null) r(null);
      else host.once('exit', r);
      setTimeout(r, 20_000);
    });
    fs.closeSync(log);
    await publisher?.close();
    await store.close();
    await db.drop();
  }
}

const triggers = arg('--triggers', 100);
const taskCount = arg('--tasks', 50);
const gapMs = arg('--gap-ms', 50);
// Tasks are spaced so that attempts do not queue behind the capacity (each attempt forks a process).
const taskGapMs = arg('--task-gap-ms', 3000);
const rows = [];
for (const on of [false, true]) rows.push(await measure(on, triggers, taskCount, gapMs, taskGapMs));
printTable(
  'wakeup: cross-process latency on MariaDB (ms), apsup run --role background, default polls',
  ['channel', 'path', 'n', 'p50', 'p95', 'p99', 'max'],
  rows.flatMap((r) =>
    (['trigger', 'submit'] as const).map((p) => [
      r.channel ? 'redis' : 'off (poll)',
      `${p}->start`,
      r[p].n,
      r[p].p50.toFixed(1),
      r[p].p95.toFixed(1),
      r[p].p99.toFixed(1),
      r[p].max.toFixed(1),
    ]),
  ),
);
console.log(`written ${writeResult('wakeup', { triggers, taskCount, gapMs, taskGapMs, machine: machineInfo(), rows })}`);
