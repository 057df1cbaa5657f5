// Readiness of a task worker reflects a reconciler that is actually sweeping (issue 16 "Operating
// tasks"), on both backends: while its sweeps fail, the worker withholds its readiness fact (it
// expires with its TTL), and publishes again once they succeed.
import assert from 'node:assert/strict';
import { after, afterEach, describe, test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import { PersistedFacts } from '../../src/observability/facts.ts';
import { buildReadiness } from '../../src/observability/readiness.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import { Runtime } from '../../src/runtime/runtime.ts';
import type { TaskRunner } from '../../src/tasks/task-runner.ts';
import { runtimeConfig } from '../fixtures/runtime-harness.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { createFixtureTables, killChildren, makeRunner } from './harness.ts';

for (const backend of BACKENDS) {
  describe(`task reconciler readiness (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    const runners: TaskRunner[] = [];
    afterEach(async () => {
      for (const r of runners.splice(0)) await r.stop();
      killChildren();
    });
    after(async () => {
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });

    test('a worker whose sweeps fail stops counting as live; it counts again once they succeed', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      await createFixtureTables(fx);
      const { tasks, runner } = await makeRunner(fx, { SWEEP_SECONDS: '0.3', READINESS_TTL_SECONDS: '1' });
      runners.push(runner);
      await runner.start();
      // A 1 s TTL can lapse on a loaded machine between two publications: wait for the fact.
      await waitFor(async () => (await tasks.readReadiness()).liveWorkers === 1, 5_000, 50);
      assert.equal(runner.reconcilerHealthy(), true);
      // The reconciler's table goes away (a broken schema): every sweep fails, the timers still run.
      const rename = (from: string, to: string) => fx.query(backend === 'sqlite' ? `ALTER TABLE ${from} RENAME TO ${to}` : `RENAME TABLE ${from} TO ${to}`);
      await rename('pc_durable_tasks', 'pc_durable_tasks_away');
      try {
        await waitFor(async () => (await tasks.readReadiness()).liveWorkers === 0, 15_000, 100);
        assert.equal(runner.reconcilerHealthy(), false);
        assert.ok(runner.stats.sweepFailures >= 1);
      } finally {
        await rename('pc_durable_tasks_away', 'pc_durable_tasks');
      }
      await waitFor(async () => (await tasks.readReadiness()).liveWorkers === 1, 15_000, 100);
      assert.equal(runner.reconcilerHealthy(), true);
    });

    test("the readiness document's time since the last good sweep is read on the runner's clock", async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      await createFixtureTables(fx);
      // A clock a day behind the system's: a figure mixing the two clocks is off by a day.
      const clock = new ManualClock({ wall: Date.now() - 86_400_000 });
      const { runner } = await makeRunner(fx, { SWEEP_SECONDS: '60' }, undefined, { clock });
      runners.push(runner);
      await runner.start(); // one sweep at start-up
      await clock.advance(250);
      // Built, not started: only its status goes into the document.
      const runtime = new Runtime(runtimeConfig(fx, []), createLogger({ level: 'silent' }), { store: fx.store });
      const doc = await buildReadiness(runtime, new PersistedFacts(runtime), runner);
      assert.equal(doc.durable_tasks.reconciler?.lastSweepAgoMs, 250);
      assert.equal(doc.durable_tasks.reconciler?.healthy, true);
    });
  });
}
