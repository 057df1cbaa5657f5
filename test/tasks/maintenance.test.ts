// The maintenance window and durable tasks (decided: README, Durable tasks), real processes on
// both backends: while `apsup maintenance on` is in effect no task is claimed (pending tasks
// wait), submissions are still recorded (the intent is durable and waits), and a running attempt
// is not interrupted: it completes. `apsup maintenance off` lets an idle worker claim the waiting
// task without its periodic sweep.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, waitFor } from '../helpers/backends.ts';
import { TEST_TASK_TYPES } from '../fixtures/tasks/types.ts';
import { FIXTURE_TASKS_MODULE, createFixtureTables, events, isTerminal, runCli, startCli, tempDir, waitForTask, processTestHooks } from './harness.ts';

for (const backend of BACKENDS) {
  describe(`durable tasks in the maintenance window (${backend})`, () => {
    const { fixtures, workers } = processTestHooks();

    test('no claim while maintenance is on; submissions wait, a running attempt completes; off resumes claiming', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      await createFixtureTables(fx);
      const tasks = new TaskStore(fx.store as BaseStore);
      const env = { POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: FIXTURE_TASKS_MODULE, SWEEP_SECONDS: '3600' };
      const worker = startCli(fx, ['tasks', 'worker'], env);
      workers.push(worker);
      const release = path.join(tempDir('apsup-maint'), 'release');
      const running = await runCli(fx, ['tasks', 'submit', 'fx-sleep', '--payload', JSON.stringify({ untilFile: release })], env);
      assert.equal(running.code, 0, running.stderr);
      const a = (JSON.parse(running.stdout) as { taskId: number }).taskId;
      await waitFor(async () => (await events(fx, a)).some((e) => e.event === 'start'), 30_000);

      const on = await runCli(fx, ['maintenance', 'on']);
      assert.equal(on.code, 0, on.stderr);
      const waiting = await runCli(fx, ['tasks', 'submit', 'fx-quick'], env);
      assert.equal(waiting.code, 0, `a submission is recorded during maintenance: ${waiting.stderr}`);
      const b = (JSON.parse(waiting.stdout) as { taskId: number }).taskId;
      // The database refuses the claim itself (any process, any setting), and the probe says so.
      assert.equal(await tasks.claim('maintenance-probe', 60_000, TEST_TASK_TYPES), null);
      assert.equal(await tasks.hasPending(TEST_TASK_TYPES), false);

      // The running attempt is not interrupted; it ends normally and its relay claims nothing.
      fs.writeFileSync(release, '');
      const doneA = await waitForTask(tasks, a, isTerminal, 30_000);
      assert.equal(doneA.state, 'succeeded', worker.output());
      const pendingB = await tasks.read(b);
      assert.deepEqual([pendingB?.state, pendingB?.attemptCount], ['pending', 0], 'nothing is claimed during maintenance');

      const off = await runCli(fx, ['maintenance', 'off']);
      assert.equal(off.code, 0, off.stderr);
      const doneB = await waitForTask(tasks, b, isTerminal, 30_000);
      assert.deepEqual([doneB.state, doneB.attemptCount], ['succeeded', 1], worker.output());
    });
  });
}
