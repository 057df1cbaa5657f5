// `apsup tasks worker` on SQLite never waits for the write lock on its event loop (the rule of
// issue 17 item 1, for the task runner's own process): another connection holds BEGIN IMMEDIATE
// for 8 s while a task's 3 s timeout falls due. The runner records the timeout verdict (a write)
// and must still stop the worker at once: SIGTERM, 1 s grace, SIGKILL, so the worker process is
// gone long before the lock is released. With a busy_timeout on the runner's connection its event
// loop froze in that write until the lock was free, and the worker lived as long as the lock.
// SQLite only: MySQL statements never block the Node event loop.
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { test } from 'node:test';
import { createBackend, waitFor } from '../helpers/backends.ts';
import { createFixtureTables, events, isAlive, isTerminal, processTestHooks, startCli, waitForTask } from './harness.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { FIXTURE_TASKS_MODULE } from './harness.ts';

const { fixtures, workers } = processTestHooks();

test('a task timeout stops its worker while another connection holds the SQLite write lock', { timeout: 120_000 }, async () => {
  const fx = await createBackend('sqlite');
  fixtures.push(fx);
  await createFixtureTables(fx);
  const tasks = new TaskStore(fx.store as BaseStore);
  workers.push(
    startCli(fx, ['tasks', 'worker'], {
      POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: FIXTURE_TASKS_MODULE,
      SWEEP_SECONDS: '3600',
      TERMINATE_GRACE_SECONDS: '1',
    }),
  );
  // A warm worker first, so the timed task starts at once and the lock is taken well before its timeout.
  const warm = await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 });
  assert.equal((await waitForTask(tasks, warm.taskId, isTerminal, 60_000)).state, 'succeeded');
  const timeoutMs = 3000;
  const { taskId } = await tasks.submit({ taskType: 'fx-hang', handlerVersion: 1, payload: { sleepMs: 600_000 }, timeoutMs });
  const started = await waitFor(async () => (await events(fx, taskId)).find((e) => e.event === 'start'), 60_000, 20);
  if (fx.target.backend !== 'sqlite') throw new Error('unreachable');
  const holder = new Database(fx.target.file);
  holder.pragma('busy_timeout = 10000');
  let held = false;
  try {
    holder.exec('BEGIN IMMEDIATE');
    held = true;
    const lockedAt = Date.now();
    assert.ok(lockedAt - started!.atMs < timeoutMs - 1000, `the lock was taken ${lockedAt - started!.atMs} ms after the start: too late to test`);
    const holdMs = 8000;
    const release = new Promise<void>((resolve) =>
      setTimeout(() => {
        holder.exec('COMMIT');
        held = false;
        resolve();
      }, holdMs),
    );
    // The worker process (it ignores the abort: fx-hang without honorSignal) must die by SIGKILL
    // about timeout + grace after its start, not when the lock is released.
    const goneAt = await waitFor(() => (isAlive(started!.pid) ? null : Date.now()), holdMs + 20_000, 20);
    const goneAfterLockMs = goneAt! - lockedAt;
    await release;
    assert.ok(goneAfterLockMs < holdMs - 2500, `the timed-out worker was stopped ${goneAfterLockMs} ms after the lock was taken (held ${holdMs} ms)`);
  } finally {
    if (held) holder.exec('COMMIT');
    holder.close();
  }
  const done = await waitForTask(tasks, taskId, isTerminal, 30_000);
  assert.deepEqual([done.state, done.errorCode], ['failed', 'timeout']);
});
