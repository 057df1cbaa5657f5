/**
 * task-worker-cpu (issue 12): the CPU a task worker process spends on one attempt of a no-op
 * handler, apart from the database and the host. W real task worker processes (the precompiled
 * entry, the bench tasks module compiled as `apsup tasks worker` compiles it) are each sent a
 * `run-task` message G ms after their last result; the handler returns, so the worker reports
 * 'returned' and writes nothing (the host would commit the success). Printed: CPU ms per attempt
 * (user, system) of the worker processes, and for comparison the same of processes that only
 * answer each message (the IPC floor). Linux only (/proc).
 * `npx tsx bench/suites/task-worker-cpu.ts [attempts=5000] [gapMs=2] [workers=4]`; nothing is
 * asserted or written but a temporary SQLite file (the workers' connection is opened at start).
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { forkManagedChild } from '../../src/child/managed-child.ts';
import { PRELOAD_TS_VARIABLE, USER_MODULES_VARIABLE } from '../../src/child/ts-loader.ts';
import { compileUserModules } from '../../src/child/user-modules.ts';
import { loadTaskRegistry } from '../../src/tasks/load.ts';
import { MODULE_ISOLATION_VARIABLE, PRELOAD_TASKS_MODULE_VARIABLE, type RunTaskMessage } from '../../src/tasks/worker-protocol.ts';
import { BENCH_TASKS_MODULE } from '../lib/task-worker.ts';
import { cpuSplit } from '../lib/proc-cpu.ts';

const attempts = Number(process.argv[2] ?? 5000);
const gapMs = Number(process.argv[3] ?? 2);
const workers = Number(process.argv[4] ?? 4);
if (!Number.isInteger(attempts) || attempts < 100 || !(gapMs >= 0) || !Number.isInteger(workers) || workers < 1) {
  console.error('usage: npx tsx bench/suites/task-worker-cpu.ts [attempts >= 100] [gapMs >= 0] [workers >= 1]');
  process.exit(2);
}

/** The echo floor: a process that answers each message with a result of the same shape. */
const ECHO = `process.on('message', (m) => process.send({ type: 'task-result', taskId: m.task.taskId, status: 'returned', resultJson: 'null', reusable: true }));
process.send({ type: 'ready', pid: process.pid });`;

function message(i: number): RunTaskMessage {
  const task = {
    taskId: i,
    taskType: 'bench-noop',
    handlerVersion: 1,
    attemptToken: `bench-${i}-0123456789abcdef`,
    attemptCount: 1,
    payload: { i },
    resumedFromTaskId: null,
  };
  return {
    type: 'run-task',
    task: task as unknown as RunTaskMessage['task'],
    tasksModule: BENCH_TASKS_MODULE,
    leaseMs: 30_000,
    progressMinStep: 0,
    terminateGraceMs: 10_000,
  };
}

/** Drives the processes; CPU ms per attempt from the first message to the last result. */
async function drive(children: ChildProcess[]): Promise<{ user: number; system: number; perSecond: number }> {
  let ready = 0;
  let sent = 0;
  let done = 0;
  let started = 0n;
  let before: Array<{ user: number; system: number }> = [];
  await new Promise<void>((resolve, reject) => {
    for (const child of children) {
      child.on('exit', (code) => reject(new Error(`a worker exited (${code})`)));
      child.on('message', (m: { type: string; reusable?: boolean }) => {
        if (m.type === 'ready') {
          if (++ready < children.length) return;
          before = children.map((c) => cpuSplit(c.pid!));
          started = process.hrtime.bigint();
          for (const c of children) c.send(message(sent++));
          return;
        }
        if (m.reusable !== true) return reject(new Error(`an attempt was not clean: ${JSON.stringify(m)}`));
        if (++done === attempts) return resolve();
        if (sent < attempts) setTimeout(() => child.send(message(sent++)), gapMs);
      });
    }
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const after = children.map((c) => cpuSplit(c.pid!));
  const sum = (k: 'user' | 'system') => after.reduce((s, a, i) => s + a[k] - before[i]![k], 0);
  for (const c of children) {
    c.removeAllListeners('exit');
    c.kill();
  }
  return { user: (sum('user') * 1000) / attempts, system: (sum('system') * 1000) / attempts, perSecond: attempts / seconds };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-worker-cpu-'));
try {
  const registry = await loadTaskRegistry(BENCH_TASKS_MODULE);
  const compiled = await compileUserModules([BENCH_TASKS_MODULE, registry.modulePath('bench-noop', 1)]);
  const manifest = 'manifest' in compiled ? compiled.manifest : '';
  const env = {
    ...process.env,
    POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: `sqlite:${path.join(dir, 'bench.sqlite')}`,
    [PRELOAD_TS_VARIABLE]: manifest ? '0' : '1',
    [USER_MODULES_VARIABLE]: manifest,
    [PRELOAD_TASKS_MODULE_VARIABLE]: BENCH_TASKS_MODULE,
    [MODULE_ISOLATION_VARIABLE]: 'process',
  };
  const echoFile = path.join(dir, 'echo.cjs');
  fs.writeFileSync(echoFile, ECHO);
  const ours = await drive(Array.from({ length: workers }, () => forkManagedChild('task-worker-main', env).child));
  const floor = await drive(
    Array.from({ length: workers }, () => fork(echoFile, [], { serialization: 'json', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })),
  );
  const row = (name: string, r: typeof ours) =>
    `${name.padEnd(22)} ${r.perSecond.toFixed(0).padStart(6)}/s  CPU ms per attempt: user ${r.user.toFixed(3)}, system ${r.system.toFixed(3)}`;
  console.log(`${attempts} attempts, ${workers} processes, next message ${gapMs} ms after each result`);
  console.log(row('task worker processes', ours));
  console.log(row('echo processes (floor)', floor));
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
