// Warm workers (ARTIFACT_PROCESSING_WARM_WORKERS): every background host, leader or standby,
// starts worker processes ahead of need, never beyond a family's budget, so the first invocation
// after a start or a takeover does not wait for a cold worker; 0 starts workers only on demand.
// Real runtimes and real worker processes on both backends.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { P, createFixtureTables, intentOf, startRuntime, statsOf, testFamily } from '../fixtures/runtime-harness.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] warm workers`, () => {
    let fx: BackendFixture;
    const runtimes: Runtime[] = [];

    beforeEach(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
    });
    afterEach(async () => {
      for (const r of runtimes.splice(0)) await r.stop();
      await fx?.cleanup();
    });

    test('a started host keeps min(WARM_WORKERS, budget) processes per family; the first invocation uses a warm one', async () => {
      const families = [testFamily('ww-wide', { maxWorkers: 3 }), testFamily('ww-narrow', { maxWorkers: 1 })];
      const runtime = await startRuntime(fx, families, { env: { [`${P}ARTIFACT_PROCESSING_WARM_WORKERS`]: '2' } });
      runtimes.push(runtime);
      assert.deepEqual([statsOf(runtime, 'ww-wide').workerSpawns, statsOf(runtime, 'ww-narrow').workerSpawns], [2, 1], 'capped by the budget');
      await waitFor(() => statsOf(runtime, 'ww-wide').workerProcesses === 2 && statsOf(runtime, 'ww-narrow').workerProcesses === 1, 15_000);
      assert.equal(statsOf(runtime, 'ww-wide').running, 0, 'warm processes are not invocations');
      await runtime.trigger('ww-wide', 'w1');
      await runtime.trigger('ww-narrow', 'n1');
      await waitFor(
        async () => (await intentOf(fx, 'ww-wide', 'w1'))?.handledGeneration === 1 && (await intentOf(fx, 'ww-narrow', 'n1'))?.handledGeneration === 1,
        20_000,
      );
      assert.deepEqual(
        [statsOf(runtime, 'ww-wide').workerSpawns, statsOf(runtime, 'ww-narrow').workerSpawns],
        [2, 1],
        'no cold start for the first invocations',
      );
    });

    test('WARM_WORKERS=0 starts no process until work arrives', async () => {
      const runtime = await startRuntime(fx, [testFamily('ww-lazy', { maxWorkers: 2 })], { env: { [`${P}ARTIFACT_PROCESSING_WARM_WORKERS`]: '0' } });
      runtimes.push(runtime);
      // A worker is started by the start-up (prewarm) or by a dispatch: once the first
      // examination round has ended, neither has started one (progress, not a fixed window).
      const supervisor = runtime.supervisors[0];
      await waitFor(() => supervisor.ticks >= 1 && supervisor.idle, 15_000);
      assert.equal(statsOf(runtime, 'ww-lazy').workerProcesses, 0);
      assert.equal(statsOf(runtime, 'ww-lazy').workerSpawns, 0);
      await runtime.trigger('ww-lazy', 'l1');
      await waitFor(async () => (await intentOf(fx, 'ww-lazy', 'l1'))?.handledGeneration === 1, 20_000);
      assert.equal(statsOf(runtime, 'ww-lazy').workerSpawns, 1);
    });

    if (backend === 'mysql') {
      test('a standby candidate keeps warm workers too, and its first invocation after the takeover uses one', async () => {
        const family = testFamily('ww-standby', { maxWorkers: 2 });
        const warm = { env: { [`${P}ARTIFACT_PROCESSING_WARM_WORKERS`]: '1' } }; // the harness starts none ahead of need
        const leader = await startRuntime(fx, [family], warm);
        runtimes.push(leader);
        const standby = await startRuntime(fx, [family], warm);
        runtimes.push(standby);
        assert.equal(standby.status().supervisors[0].state, 'standby');
        await waitFor(() => statsOf(standby, 'ww-standby').workerProcesses === 1, 15_000);
        await leader.stop();
        await waitFor(() => standby.status().supervisors[0].state === 'leader', 15_000);
        await fx.store.acceptRequest(family.bindingName, 's1');
        standby.notifyRequest('ww-standby');
        await waitFor(async () => (await intentOf(fx, 'ww-standby', 's1'))?.handledGeneration === 1, 20_000);
        assert.equal(statsOf(standby, 'ww-standby').workerSpawns, 1, 'the takeover used the warm worker');
      });
    }
  });
}
