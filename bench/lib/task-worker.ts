/**
 * Our side of the tasks suite: a benchmark database with the bench tasks module, submits from
 * this process (TaskService, one call per task), and `apsup tasks worker` as a child process
 * (whatever the runner does inside: a fresh process per attempt or a warm pool). Every figure is
 * read from the database (started_at of the first claim, finished_at of the last completion) or
 * from bench_task_starts (record tasks), so nothing depends on the runner's internals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BaseStore } from '../../src/store/base-store.ts';
import { parseTaskConfig } from '../../src/tasks/config.ts';
import { loadTaskRegistry } from '../../src/tasks/load.ts';
import { TaskService } from '../../src/tasks/service.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import type { SqliteSynchronous } from '../../src/store/sqlite/synchronous.ts';
import type { BackendFixtureLike } from './fixture.ts';
import { track, waitExit } from './children.ts';
import { APSUP_BIN, benchLogFile, sleep } from './runtime-host.ts';

export const BENCH_TASKS_MODULE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'tasks.ts');
const now = () => performance.timeOrigin + performance.now();

export interface OurTasks {
  fx: BackendFixtureLike;
  service: TaskService;
  tasks: TaskStore;
  env: NodeJS.ProcessEnv;
}

export async function prepareOurTasks(fx: BackendFixtureLike, capacity: number, synchronous: SqliteSynchronous): Promise<OurTasks> {
  await fx.exec(
    fx.backend === 'sqlite'
      ? 'CREATE TABLE bench_task_starts (task_id INTEGER PRIMARY KEY, started_ms REAL NOT NULL)'
      : 'CREATE TABLE bench_task_starts (task_id BIGINT PRIMARY KEY, started_ms DOUBLE NOT NULL) ENGINE = InnoDB',
  );
  const tasks = new TaskStore(fx.store as BaseStore);
  // The database's claim cap (default 4) must not be below the worker's capacity.
  await tasks.setCapacity(Math.max(capacity, 4));
  const registry = await loadTaskRegistry(BENCH_TASKS_MODULE);
  const env: NodeJS.ProcessEnv = {
    POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: fx.db.url,
    POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: BENCH_TASKS_MODULE,
    POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_CAPACITY: String(capacity),
    POWERCONTEXT_SERVER_RUNTIME_SQLITE_SYNCHRONOUS: synchronous,
    APSUP_LOG_LEVEL: 'error',
  };
  const service = new TaskService(tasks, registry, parseTaskConfig(env));
  return { fx, service, tasks, env };
}

/** Sequential single submits of bench-noop: the task ids and submits/s. */
export async function submitNoops(ours: OurTasks, n: number): Promise<{ ids: number[]; perSecond: number }> {
  const ids: number[] = [];
  const t0 = now();
  for (let i = 0; i < n; i += 1) ids.push((await ours.service.submit({ taskType: 'bench-noop', payload: {} })).taskId);
  return { ids, perSecond: n / ((now() - t0) / 1000) };
}

/**
 * N bench-noop tasks in one transaction (batches of 1,000): a running worker sees the whole
 * backlog at its commit, as a worker started after N single submits does.
 */
export async function submitNoopBacklog(ours: OurTasks, n: number): Promise<number[]> {
  const ids: number[] = [];
  await ours.tasks.transaction(async (tx) => {
    for (let done = 0; done < n; done += 1000) {
      const chunk = Array.from({ length: Math.min(1000, n - done) }, () => ({ taskType: 'bench-noop', payload: {} }));
      for (const r of await ours.service.submitBatch(chunk, tx)) ids.push(r.taskId);
    }
  });
  return ids;
}

/**
 * The runner's group commit without worker processes or a host (task-server.ts, success-ab.ts):
 * claims `group` tasks, then each call of the returned function commits successes G at a time,
 * each call of pc_task_succeed_batch claiming as many as it succeeded, until `count` are done.
 */
export async function groupCommitLoop(ours: OurTasks, workerId: string, leaseMs: number, group: number): Promise<(count: number) => Promise<number>> {
  const claim = { workerId, leaseMs, taskTypes: ['bench-noop'] };
  await ours.tasks.setCapacity(Math.max(4, group));
  let held = await ours.tasks.claimBatch(claim.workerId, claim.leaseMs, claim.taskTypes, group);
  return async (count) => {
    let done = 0;
    while (done < count) {
      const items = held.slice(0, group).map((t) => ({ taskId: t.taskId, attemptToken: t.attemptToken, resultJson: null }));
      const r = await ours.tasks.succeedBatch(items, { ...claim, maxCount: items.length });
      if (r.outcomes.some((o) => o !== 'succeeded') || r.claimed.length !== items.length) {
        throw new Error(`unexpected result: ${r.outcomes.join(',')}, ${r.claimed.length} claimed`);
      }
      held = [...held.slice(group), ...r.claimed];
      done += items.length;
    }
    return done;
  };
}

export function startTaskWorker(ours: OurTasks, logName: string): ChildProcess {
  const out = fs.openSync(benchLogFile(logName), 'a');
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('POWERCONTEXT_SERVER_RUNTIME_') && v !== undefined) env[k] = v;
  // APSUP_BENCH_CPU_PROF=<dir>: the task worker host (not its worker processes) writes a V8 CPU profile there.
  const prof = process.env.APSUP_BENCH_CPU_PROF;
  const profArgs = prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [];
  const child = spawn(process.execPath, [...profArgs, APSUP_BIN, 'tasks', 'worker'], { env: { ...env, ...ours.env }, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  return track(child);
}

export async function stopTaskWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await waitExit(child, 20_000);
}

/** Waits until none of ids [first, last] is pending or running; the states of the range. */
export async function waitTasksDone(ours: OurTasks, first: number, last: number, timeoutMs: number, child?: ChildProcess): Promise<Record<string, number>> {
  const deadline = now() + timeoutMs;
  const byState = async () => {
    const rows = await ours.fx.exec('SELECT state, COUNT(*) AS n FROM pc_durable_tasks WHERE task_id BETWEEN ? AND ? GROUP BY state', [first, last]);
    return Object.fromEntries(rows.map((r) => [String(r.state), Number(r.n)]));
  };
  for (;;) {
    // Only the unfinished ones, through the state index: reading every row of the range each
    // turn cost the server more than the drain's own claims (5,000 rows per poll on MariaDB).
    const open = await ours.fx.exec("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE state IN ('pending', 'running') AND task_id BETWEEN ? AND ?", [
      first,
      last,
    ]);
    if (Number(open[0]?.n) === 0) return byState();
    if (child && (child.exitCode !== null || child.signalCode !== null))
      throw new Error(`apsup tasks worker exited (${child.exitCode ?? child.signalCode}); see ${benchLogFile('tasks')}*`);
    if (now() > deadline) throw new Error(`tasks ${first}..${last} not done after ${timeoutMs} ms: ${JSON.stringify(await byState())}`);
    // The figures come from the database clock (claimToCompletionSeconds): the pace of this poll
    // changes only when the bench moves on.
    await sleep(200);
  }
}

/** Seconds from the first claim (started_at) to the last completion (finished_at), database clock. */
export async function claimToCompletionSeconds(ours: OurTasks, first: number, last: number): Promise<number> {
  const sql =
    ours.fx.backend === 'sqlite'
      ? 'SELECT (julianday(MAX(finished_at)) - julianday(MIN(started_at))) * 86400.0 AS s FROM pc_durable_tasks WHERE task_id BETWEEN ? AND ?'
      : 'SELECT TIMESTAMPDIFF(MICROSECOND, MIN(started_at), MAX(finished_at)) / 1000000.0 AS s FROM pc_durable_tasks WHERE task_id BETWEEN ? AND ?';
  const rows = await ours.fx.exec(sql, [first, last]);
  return Number(rows[0]?.s);
}

/** Paced bench-record submits while the worker runs: submit to handler start (ms), sorted. */
export async function ourLatency(ours: OurTasks, triggers: number, gapMs: number, child: ChildProcess): Promise<number[]> {
  const submitted = new Map<number, number>();
  const t0 = now();
  for (let i = 0; i < triggers; i += 1) {
    const wait = t0 + i * gapMs - now();
    if (wait > 0) await sleep(wait);
    const t = now();
    const { taskId } = await ours.service.submit({ taskType: 'bench-record', payload: { i } });
    submitted.set(taskId, t);
  }
  const ids = [...submitted.keys()];
  await waitTasksDone(ours, Math.min(...ids), Math.max(...ids), 600_000, child);
  const marks = ids.map(() => '?').join(', ');
  const rows = await ours.fx.exec(`SELECT task_id, started_ms FROM bench_task_starts WHERE task_id IN (${marks})`, ids);
  if (rows.length !== ids.length) throw new Error(`${ids.length - rows.length} of ${ids.length} record tasks left no start time`);
  return rows.map((r) => Number(r.started_ms) - submitted.get(Number(r.task_id))!).sort((a, b) => a - b);
}
