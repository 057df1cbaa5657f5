/**
 * Helpers of the durable-task tests: the fixture tasks module, the fixture tables, an in-process
 * TaskRunner, child processes (CLI, store child) that are always killed at cleanup, and polling
 * helpers bound by a timeout (no fixed sleeps wait for behaviour).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { after, afterEach } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../../src/logging.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { parseTaskConfig, type TaskConfig } from '../../src/tasks/config.ts';
import { loadHostTaskRegistry } from '../../src/child/host-import.ts';
import { REFERENCE_TASKS_MODULE } from '../../src/tasks/load.ts';
import type { TaskRegistry } from '../../src/tasks/registry.ts';
import { TaskService } from '../../src/tasks/service.ts';
import type { Clock } from '../../src/runtime/clock.ts';
import { TaskRunner } from '../../src/tasks/task-runner.ts';
import { TERMINAL_STATES, TaskStore, type TaskDetail } from '../../src/tasks/task-store.ts';
import { waitFor, type BackendFixture } from '../helpers/backends.ts';
import { fixtureChild } from '../helpers/fixture-child.ts';

// Worker children inherit the environment: keep their logs to errors unless asked otherwise.
process.env.APSUP_LOG_LEVEL ??= 'error';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURE_TASKS_MODULE = path.join(REPO_ROOT, 'test', 'fixtures', 'tasks', 'registry.ts');
export { REFERENCE_TASKS_MODULE };
export const T = 'POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_';

/** fx_task_events: what fixture handlers did (task, event, wall clock ms, pid, attempt). */
export async function createFixtureTables(fx: BackendFixture): Promise<void> {
  await fx.query(
    'CREATE TABLE fx_task_events (task_id BIGINT NOT NULL, event VARCHAR(64) NOT NULL, at_ms BIGINT NOT NULL, pid INT NOT NULL, attempt INT NOT NULL)',
  );
}

export interface TaskEvent {
  taskId: number;
  event: string;
  atMs: number;
  pid: number;
  attempt: number;
}

export async function events(fx: BackendFixture, taskId?: number): Promise<TaskEvent[]> {
  const rows =
    taskId === undefined
      ? await fx.query('SELECT task_id, event, at_ms, pid, attempt FROM fx_task_events ORDER BY at_ms')
      : await fx.query('SELECT task_id, event, at_ms, pid, attempt FROM fx_task_events WHERE task_id = ? ORDER BY at_ms', [taskId]);
  return rows.map((r) => ({ taskId: Number(r.task_id), event: String(r.event), atMs: Number(r.at_ms), pid: Number(r.pid), attempt: Number(r.attempt) }));
}

export async function insertRow(fx: BackendFixture, fileId: string, state = 'uploaded', taskId: number | null = null): Promise<void> {
  await fx.query('INSERT INTO ref_files (file_id, state, task_id) VALUES (?, ?, ?)', [fileId, state, taskId]);
}

export async function rowState(fx: BackendFixture, fileId: string): Promise<string | null> {
  const rows = await fx.query('SELECT state FROM ref_files WHERE file_id = ?', [fileId]);
  return rows.length === 0 ? null : String(rows[0].state);
}

/**
 * Test runners start task worker processes when work arrives (DURABLE_TASK_WARM_WORKERS=0) unless
 * a test sets it: a warm one kept beside every busy one cost the suite a process per runner and
 * tests nothing more (the warm pool's own tests set it).
 */
export const TEST_WARM_WORKERS = '0';

export function taskConfig(overrides: Record<string, string> = {}, tasksModule = FIXTURE_TASKS_MODULE): TaskConfig {
  const env: Record<string, string> = { [`${T}WARM_WORKERS`]: TEST_WARM_WORKERS };
  for (const [k, v] of Object.entries(overrides)) env[k.startsWith('POWERCONTEXT_') ? k : `${T}${k}`] = v;
  return { ...parseTaskConfig(env), tasksModule };
}

export interface RunnerKit {
  tasks: TaskStore;
  registry: TaskRegistry;
  service: TaskService;
  config: TaskConfig;
  runner: TaskRunner;
  /** The runner's warnings and errors (JSON lines), for the message of an assertion that fails. */
  warnings: string[];
}

/** A TaskRunner in this process on fx (not started), with its TaskService wired to runner.notify(). */
export async function makeRunner(
  fx: BackendFixture,
  overrides: Record<string, string> = {},
  tasksModule = FIXTURE_TASKS_MODULE,
  options: { clock?: Clock } = {},
): Promise<RunnerKit> {
  const tasks = new TaskStore(fx.store as BaseStore);
  const registry = await loadHostTaskRegistry(tasksModule);
  const config = taskConfig(overrides, tasksModule);
  const warnings: string[] = [];
  const logger = createLogger({ level: 'warn', destination: { write: (line: string) => void warnings.push(line.trim()) } });
  const runner = new TaskRunner(tasks, registry, config, fx.url, logger, { clock: options.clock });
  const service = new TaskService(tasks, registry, config);
  runner.attach(service);
  return { tasks, registry, service, config, runner, warnings };
}

export async function waitForTask(tasks: TaskStore, taskId: number, check: (t: TaskDetail) => boolean, timeoutMs = 20_000): Promise<TaskDetail> {
  let last: TaskDetail | null = null;
  try {
    return (await waitFor<TaskDetail | null>(
      async () => {
        const t = await tasks.read(taskId);
        last = t;
        return t && check(t) ? t : null;
      },
      timeoutMs,
      25,
    )) as TaskDetail;
  } catch (error) {
    throw new Error(`task ${taskId}: ${(error as Error).message}; last seen ${JSON.stringify(last)}`);
  }
}

export const isTerminal = (t: TaskDetail) => TERMINAL_STATES.includes(t.state);

/** Waits until the task's lease is `pastMs` or more behind the database clock (expired, by default). */
export async function waitLeaseExpired(tasks: TaskStore, taskId: number, timeoutMs = 10_000, pastMs = 0): Promise<TaskDetail> {
  return waitForTask(tasks, taskId, (t) => t.leaseExpiresAt !== null && t.dbNow.getTime() - t.leaseExpiresAt.getTime() >= pastMs, timeoutMs);
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
}

// ---- child processes ------------------------------------------------------------------------

const children = new Set<ChildProcess>();

/** Kills every child process this file started that is still alive (SIGKILL). */
export function killChildren(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
}

export { isAlive } from '../../src/devtools/processes.ts';

function cliEnv(fx: BackendFixture, env: Record<string, string>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {
    ...process.env,
    POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: fx.url,
    APSUP_LOG_LEVEL: process.env.APSUP_LOG_LEVEL ?? 'error',
    [`${T}WARM_WORKERS`]: TEST_WARM_WORKERS, // as taskConfig
  };
  for (const [k, v] of Object.entries(env))
    out[k.startsWith('POWERCONTEXT_') || k.startsWith('APSUP_') || k.startsWith('FX_') || k === 'NODE_OPTIONS' ? k : `${T}${k}`] = v;
  return out;
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `apsup <args>` (bin/apsup.mjs) to completion. */
export function runCli(fx: BackendFixture, args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<CliRun> {
  const child = spawn(process.execPath, ['bin/apsup.mjs', ...args], {
    cwd: REPO_ROOT,
    env: cliEnv(fx, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`apsup ${args.join(' ')} did not finish within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface LongChild {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** Starts `apsup <args>` (e.g. tasks worker) and returns at once. */
export function startCli(fx: BackendFixture, args: string[], env: Record<string, string> = {}): LongChild {
  const child = spawn(process.execPath, ['bin/apsup.mjs', ...args], {
    cwd: REPO_ROOT,
    env: cliEnv(fx, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return { child, exited, output: () => out };
}

/** Stops a long child with SIGTERM, then SIGKILL if it does not exit within boundMs. */
export async function stopChild(c: LongChild, boundMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (c.child.exitCode !== null || c.child.signalCode !== null) return c.exited;
  c.child.kill('SIGTERM');
  const timer = setTimeout(() => c.child.kill('SIGKILL'), boundMs);
  const r = await c.exited;
  clearTimeout(timer);
  return r;
}

/** A store child (test/fixtures/tasks/store-child.ts): its own process and connection. */
export class StoreChild {
  private readonly child: ChildProcess;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private stderr = '';

  constructor(fx: BackendFixture) {
    const entry = fixtureChild('test/fixtures/tasks/store-child.ts');
    this.child = spawn(process.execPath, [...entry.args, fx.url], {
      cwd: REPO_ROOT,
      env: cliEnv(fx, entry.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.add(this.child);
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      this.stderr += d;
    });
    readline.createInterface({ input: this.child.stdout! }).on('line', (line) => {
      const reply = JSON.parse(line) as { id: number; ok: boolean; result?: unknown; code?: string; message?: string };
      const w = this.waiting.get(reply.id);
      if (!w) return;
      this.waiting.delete(reply.id);
      if (reply.ok) w.resolve(reply.result);
      else w.reject(Object.assign(new Error(reply.message ?? 'store child error'), { code: reply.code }));
    });
    this.child.on('exit', (code, signal) => {
      children.delete(this.child);
      for (const w of this.waiting.values()) w.reject(new Error(`store child exited (${code ?? signal}); stderr: ${this.stderr}`));
      this.waiting.clear();
    });
  }

  send<R = unknown>(op: string, args: Record<string, unknown> = {}): Promise<R> {
    const id = this.nextId++;
    const p = new Promise<R>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.child.stdin!.write(`${JSON.stringify({ id, op, ...args })}\n`);
    return p;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/** Resolves 'pending' if the promise has not settled within ms (only to show something has NOT happened yet). */
export async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<{ settled: true; value: T } | { settled: false }> {
  let timer!: NodeJS.Timeout;
  const r = await Promise.race([
    promise.then((value) => ({ settled: true as const, value })),
    new Promise<{ settled: false }>((res) => {
      timer = setTimeout(() => res({ settled: false }), ms);
    }),
  ]);
  clearTimeout(timer);
  return r;
}

/**
 * What a process test leaves behind, cleaned in the enclosing suite: after each test its
 * runners are stopped, its CLI workers stopped (5 s bound), `extra` run, stray children killed;
 * after the suite its databases dropped.
 */
export function processTestHooks(extra?: () => Promise<void> | void): { fixtures: BackendFixture[]; workers: LongChild[]; runners: TaskRunner[] } {
  const fixtures: BackendFixture[] = [];
  const workers: LongChild[] = [];
  const runners: TaskRunner[] = [];
  afterEach(async () => {
    for (const r of runners.splice(0)) await r.stop();
    await Promise.all(workers.splice(0).map((w) => stopChild(w, 5000)));
    await extra?.();
    killChildren();
  });
  after(async () => {
    for (const fx of fixtures.splice(0)) await fx.cleanup();
  });
  return { fixtures, workers, runners };
}
