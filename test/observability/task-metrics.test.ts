// Durable task metrics on GET /metrics and the reconciler in /readyz, for the runner embedded in
// a real runtime host (apsup run's wiring), on both backends: active tasks by state and type,
// claims, attempts by outcome, failures by reason, attempt durations, reconciler health.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, describe, test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import { ObservabilityServer } from '../../src/observability/server.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { loadHostTaskRegistry } from '../../src/child/host-import.ts';
import { TaskRunner } from '../../src/tasks/task-runner.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { createFixtureTables as createRuntimeTables, startRuntime, testFamily } from '../fixtures/runtime-harness.ts';
import { FIXTURE_TASKS_MODULE, createFixtureTables, isTerminal, killChildren, taskConfig, tempDir, waitForTask } from '../tasks/harness.ts';
import { get, readyz, samples, value } from './helpers.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] observability: durable task metrics`, () => {
    const cleanups: Array<() => Promise<void>> = [];
    after(async () => {
      for (const c of cleanups.reverse()) await c();
      killChildren();
    });

    test('tasks by state and type, claims, outcomes, failures by reason, durations and reconciler health', async () => {
      const fx: BackendFixture = await createBackend(backend);
      cleanups.push(() => fx.cleanup());
      await createRuntimeTables(fx);
      await createFixtureTables(fx);
      const runtime: Runtime = await startRuntime(fx, [testFamily('tm-alpha')]);
      cleanups.push(() => runtime.stop());
      const tasks = new TaskStore(runtime.store as BaseStore);
      const config = taskConfig({ CAPACITY: '2', SWEEP_SECONDS: '3600' });
      const runner = new TaskRunner(tasks, await loadHostTaskRegistry(FIXTURE_TASKS_MODULE), config, fx.url, createLogger({ level: 'silent' }));
      await runner.start();
      cleanups.push(() => runner.stop());
      const server = await ObservabilityServer.start(runtime, { address: { host: '127.0.0.1', port: 0 }, cacheMs: 0, taskRunner: runner });
      cleanups.push(() => server.stop());

      const ok = await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 });
      const crash = await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: { crashBelowAttempt: 9 }, timeoutMs: 60_000 });
      runner.notify();
      assert.equal((await waitForTask(tasks, ok.taskId, isTerminal)).state, 'succeeded');
      assert.equal((await waitForTask(tasks, crash.taskId, isTerminal)).errorCode, 'worker_exited');
      // Both slots (capacity 2) taken by long tasks, a third one pending.
      const release = `${tempDir('apsup-tm')}/release`;
      const long1 = await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: { untilFile: release }, timeoutMs: 60_000 });
      const long2 = await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: { untilFile: release }, timeoutMs: 60_000 });
      const waiting = await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 });
      runner.notify();
      await waitForTask(tasks, long1.taskId, (t) => t.state === 'running');
      await waitForTask(tasks, long2.taskId, (t) => t.state === 'running');
      // The claim is visible in the database before its result reaches the runner, which counts it.
      await waitFor(() => runner.runningCount >= 2, 20_000);

      const body = (await get(server, '/metrics')).body;
      assert.equal(value(body, 'durable_task_tasks', { state: 'running', task_type: 'fx-sleep' }), 2);
      assert.equal(value(body, 'durable_task_tasks', { state: 'pending', task_type: 'fx-quick' }), 1);
      assert.equal(value(body, 'durable_task_tasks_capped', {}), 0);
      assert.ok((value(body, 'durable_task_claims_total', { task_type: 'fx-quick' }) ?? 0) >= 1);
      assert.ok((value(body, 'durable_task_claims_total', { task_type: 'fx-sleep' }) ?? 0) >= 3);
      assert.equal(value(body, 'durable_task_attempts_total', { task_type: 'fx-quick', outcome: 'succeeded' }), 1);
      // fx-quick registers no ctx.onComplete writes: its success went through the runner's group commit.
      assert.equal(value(body, 'durable_task_success_commits_total', {}), 1);
      assert.equal(value(body, 'durable_task_success_commit_items_total', {}), 1);
      assert.equal(value(body, 'durable_task_failures_total', { task_type: 'fx-sleep', reason: 'worker_exited' }), 1);
      assert.equal(value(body, 'durable_task_attempt_duration_seconds_count', { task_type: 'fx-quick', outcome: 'succeeded' }), 1);
      assert.equal(value(body, 'durable_task_reconciler_healthy', {}), 1);
      for (const s of samples(body, 'durable_task_tasks')) assert.deepEqual(Object.keys(s.labels).sort(), ['state', 'task_type']);
      assert.doesNotMatch(body, new RegExp(`task_id|${long1.taskId}"`));

      const doc = (await readyz(server)).doc;
      assert.equal(doc.durable_tasks.reconciler.healthy, true);
      assert.ok(doc.durable_tasks.liveWorkers >= 1);
      fs.writeFileSync(release, '');
      assert.equal((await waitForTask(tasks, waiting.taskId, isTerminal)).state, 'succeeded');
      await waitFor(() => runner.runningCount === 0, 10_000);
    });
  });
}
