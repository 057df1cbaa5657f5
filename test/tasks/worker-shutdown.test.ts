// Shutdown of a real `apsup tasks worker` process on both backends while a convergence is in
// flight (issue 16 "Operating tasks"): SIGTERM waits (bounded) for it instead of closing the
// store under it, and the convergence commits with its failure hook.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, afterEach, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { txQuery } from '../../src/store/tx-query.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { FIXTURE_TASKS_MODULE, createFixtureTables, isTerminal, killChildren, rowState, startCli, tempDir, waitForTask } from './harness.ts';
import { TEST_TASK_TYPES } from '../fixtures/tasks/types.ts';

for (const backend of BACKENDS) {
  describe(`task worker shutdown (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    afterEach(() => killChildren());
    after(async () => {
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });

    test('SIGTERM during a convergence waits for it; the store is closed only afterwards', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      await createFixtureTables(fx);
      const tasks = new TaskStore(fx.store as BaseStore);
      const dir = tempDir('apsup-shutdown');
      const hang = `${dir}/hang`;
      const started = `${dir}/started`;
      fs.writeFileSync(hang, '');
      const { taskId } = await tasks.transaction(async (tx) => {
        const r = await tasks.submit(
          { taskType: 'fx-sleep', handlerVersion: 1, payload: { rowId: 'sd-row', hookHangFile: hang, hookStartedFile: started }, timeoutMs: 60_000 },
          tx,
        );
        await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES ('sd-row', 'indexing', ?)", [r.taskId]);
        return r;
      });
      // A worker that claimed it and vanished: a periodic sweep of the new worker (not its
      // start-up sweep: the lease is still live then) converges it.
      const ghost = new TaskStore(fx.openStore() as BaseStore);
      assert.equal((await ghost.claim('ghost-worker', 8000, TEST_TASK_TYPES))?.taskId, taskId);
      const worker = startCli(fx, ['tasks', 'worker'], {
        POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: FIXTURE_TASKS_MODULE,
        SWEEP_SECONDS: '0.3',
        FAILURE_HOOK_TIMEOUT_SECONDS: '30',
        APSUP_LOG_LEVEL: 'info',
      });
      await waitFor(async () => (await tasks.readReadiness()).liveWorkers >= 1, 30_000);
      assert.equal(fs.existsSync(started), false, 'the start-up sweep did not converge it');
      await waitFor(() => fs.existsSync(started), 30_000);
      worker.child.kill('SIGTERM');
      // Evidence that the stop reached its wait with the convergence in flight (not a pause).
      await waitFor(() => /task runner waiting for database work in flight/.test(worker.output()), 30_000);
      fs.rmSync(hang);
      const exit = await worker.exited;
      assert.equal(exit.code, 0, worker.output());
      assert.doesNotMatch(worker.output(), /closed state|Pool is closed|convergence failed/, 'nothing ran on a closed store');
      const t = await waitForTask(tasks, taskId, isTerminal, 5000);
      assert.deepEqual([t.state, t.errorCode], ['failed', 'lost']);
      assert.equal(await rowState(fx, 'sd-row'), 'error', 'the convergence in flight committed with its hook');
    });
  });
}
