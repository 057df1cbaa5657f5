// Acceptance A8 (RFC 12.8, section 5): requests accepted while a key is queued merge into one
// invocation carrying the latest generation; a request accepted while the key runs is not
// swallowed by that run's acknowledgement (the run acknowledges only the generation it claimed,
// and exactly one successor follows); dirty marks made during a run stay (the run confirms only
// the dirty generation of its start snapshot).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { createFixtureTables, intentOf, openGate, runs, setBehaviour, startRuntime, testFamily } from '../fixtures/runtime-harness.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] A8 merging of triggers; acknowledgements never swallow later requests`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;
    const F = 'fx-merge';

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      await setBehaviour(fx, F, '*', 'gate');
      runtime = await startRuntime(fx, [testFamily(F, { maxWorkers: 1 })]);
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('triggers while queued merge into one invocation with the latest generation', async () => {
      await runtime.trigger(F, 'g');
      await waitFor(async () => (await runs(fx, F, 'g')).length === 1, 20_000);
      // The only worker is busy with g: q is queued (owed) while it collects five triggers.
      for (let i = 0; i < 5; i += 1) await runtime.trigger(F, 'q');
      assert.equal((await runs(fx, F, 'q')).length, 0);
      await openGate(fx, F, 'q', 5);
      await openGate(fx, F, 'g');
      await waitFor(async () => (await intentOf(fx, F, 'q'))!.handledGeneration === 5, 20_000);
      const qRuns = await runs(fx, F, 'q');
      assert.deepEqual(
        qRuns.map((r) => r.generation),
        [5],
        'one invocation for five queued triggers',
      );
    });

    test('a trigger and a dirty mark during a run: the run acknowledges its own generation, a successor takes the rest', async () => {
      await runtime.markDirty(F, 'r');
      await runtime.trigger(F, 'r');
      await waitFor(async () => (await runs(fx, F, 'r')).length === 1, 20_000);
      const [first] = await runs(fx, F, 'r');
      assert.equal(first.generation, 1);
      assert.equal(first.snapshotDirty, 1);
      // While r runs: three more requests and new ordinary work.
      for (let i = 0; i < 3; i += 1) await runtime.trigger(F, 'r');
      await runtime.markDirty(F, 'r');
      await openGate(fx, F, 'r', 1);
      // The successor starts (and waits at the gate): it claimed the merged generation 4.
      await waitFor(async () => (await runs(fx, F, 'r')).length === 2, 20_000);
      const between = await intentOf(fx, F, 'r');
      assert.equal(between!.handledGeneration, 1, 'the first run acknowledged only what it claimed');
      assert.equal(between!.requestedGeneration, 4, 'the later requests stay owed');
      assert.equal(between!.cleanGeneration, 1, 'clean confirms only the start snapshot');
      assert.equal(between!.dirtyGeneration, 2, 'the dirty mark made during the run stays');
      const second = (await runs(fx, F, 'r'))[1];
      assert.equal(second.generation, 4);
      assert.equal(second.snapshotDirty, 2);
      await openGate(fx, F, 'r', 1);
      await waitFor(async () => (await intentOf(fx, F, 'r'))!.handledGeneration === 4, 20_000);
      const done = await intentOf(fx, F, 'r');
      assert.equal(done!.cleanGeneration, 2);
      assert.equal(done!.requestedGeneration, 4);
      // Exactly one successor: no third invocation follows on its own. A later trigger of
      // another key is the barrier that shows the family has gone past r.
      await runtime.trigger(F, 'z');
      await openGate(fx, F, 'z', 1);
      await waitFor(async () => (await intentOf(fx, F, 'z'))!.handledGeneration === 1, 20_000);
      assert.equal((await runs(fx, F, 'r')).length, 2);
    });
  });
}
