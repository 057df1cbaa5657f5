// Acceptance A1 (RFC 12.1, sections 2 and 5): the same scheduling key never runs in parallel,
// while different scopes and different families run in parallel up to their own budgets.
// Processors are real worker processes (test/fixtures/processors/scripted.ts) that record their
// start/end instants in fx_runs; gates in fx_gates hold them until the test lets them go.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  createFixtureTables,
  intentOf,
  maxConcurrency,
  openGate,
  overlapping,
  runs,
  setBehaviour,
  startRuntime,
  statsOf,
  testFamily,
} from '../fixtures/runtime-harness.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const backend of BACKENDS) {
  describe(`[${backend}] A1 single flight per key, parallel up to per-family budgets`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;
    const families = [testFamily('fx-a', { maxWorkers: 2 }), testFamily('fx-b', { maxWorkers: 2 }), testFamily('fx-k', { maxWorkers: 3 })];

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      await setBehaviour(fx, 'fx-a', '*', 'gate');
      await setBehaviour(fx, 'fx-b', '*', 'gate');
      runtime = await startRuntime(fx, families);
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('different scopes and families run in parallel, each family up to its budget and no further', async () => {
      for (const s of ['a1', 'a2', 'a3', 'a4']) await runtime.trigger('fx-a', s);
      for (const s of ['b1', 'b2', 'b3', 'b4']) await runtime.trigger('fx-b', s);
      // Both families reach their budget at the same time (4 invocations open at once).
      await waitFor(async () => (await runs(fx)).filter((r) => r.endedMs === null).length === 4, 20_000);
      const open = (await runs(fx)).filter((r) => r.endedMs === null);
      assert.equal(open.filter((r) => r.family === 'fx-a').length, 2);
      assert.equal(open.filter((r) => r.family === 'fx-b').length, 2);
      for (const f of ['fx-a', 'fx-b']) {
        const stats = statsOf(runtime, f);
        assert.equal(stats.running, 2, `${f} runs exactly its budget`);
      }
      // The other two keys of each family stay owed (queued or not yet discovered), not running.
      const queued = open.map((r) => r.scopeId);
      for (const [f, scopes] of [
        ['fx-a', ['a1', 'a2', 'a3', 'a4']],
        ['fx-b', ['b1', 'b2', 'b3', 'b4']],
      ] as const) {
        for (const s of scopes.filter((x) => !queued.includes(x))) {
          const i = await intentOf(fx, f, s);
          assert.ok(i!.requestedGeneration > i!.handledGeneration, `${f}/${s} stays owed`);
          assert.equal((await runs(fx, f, s)).length, 0);
        }
      }
      for (const s of ['a1', 'a2', 'a3', 'a4']) await openGate(fx, 'fx-a', s);
      for (const s of ['b1', 'b2', 'b3', 'b4']) await openGate(fx, 'fx-b', s);
      await waitFor(async () => {
        const all = await runs(fx);
        return all.length === 8 && all.every((r) => r.endedMs !== null);
      }, 20_000);
      const all = await runs(fx);
      assert.equal(maxConcurrency(all.filter((r) => r.family === 'fx-a')), 2);
      assert.equal(maxConcurrency(all.filter((r) => r.family === 'fx-b')), 2);
      for (const s of ['a1', 'a2', 'a3', 'a4']) {
        const i = await intentOf(fx, 'fx-a', s);
        assert.equal(i!.handledGeneration, i!.requestedGeneration);
      }
    });

    test('triggers while a key runs do not start a second worker for it; one successor follows', async () => {
      await setBehaviour(fx, 'fx-k', 'k', 'gate');
      await runtime.trigger('fx-k', 'k');
      await waitFor(async () => (await runs(fx, 'fx-k', 'k')).length === 1, 20_000);
      for (let i = 0; i < 10; i += 1) await runtime.trigger('fx-k', 'k');
      await runtime.markDirty('fx-k', 'k');
      // Budget 3 is free for two more workers, yet the key stays single-flight.
      await waitFor(() => statsOf(runtime, 'fx-k').ready === 0 && statsOf(runtime, 'fx-k').running === 1);
      assert.equal((await runs(fx, 'fx-k', 'k')).length, 1);
      await openGate(fx, 'fx-k', 'k', 2);
      await waitFor(async () => {
        const i = await intentOf(fx, 'fx-k', 'k');
        return i!.handledGeneration === 11;
      }, 20_000);
      const list = await runs(fx, 'fx-k', 'k');
      assert.deepEqual(
        list.map((r) => r.generation),
        [1, 11],
        'the run claimed 1; one successor merged the 10 later triggers',
      );
      assert.deepEqual(overlapping(list), []);
    });

    test('a stream of triggers for several scopes: no key ever overlaps itself, triggers merge, budget holds', async () => {
      await setBehaviour(fx, 'fx-k', '*', 'sleep', { ms: 120 });
      const scopes = ['s1', 's2', 's3'];
      for (let i = 0; i < 12; i += 1) {
        for (const s of scopes) await runtime.trigger('fx-k', s);
        await sleep(35);
      }
      await waitFor(async () => {
        for (const s of scopes) {
          const i = await intentOf(fx, 'fx-k', s);
          if (!i || i.handledGeneration !== i.requestedGeneration) return false;
        }
        return true;
      }, 30_000);
      const all = await runs(fx, 'fx-k');
      for (const s of scopes) {
        const list = all.filter((r) => r.scopeId === s);
        assert.ok(list.length >= 2, `${s} ran more than once (${list.length})`);
        assert.ok(list.length < 12, `${s}: triggers merged (${list.length} runs for 12 triggers)`);
        assert.deepEqual(overlapping(list), [], `${s} never ran twice at once`);
        const gens = list.map((r) => r.generation);
        assert.deepEqual(
          gens,
          [...gens].sort((a, b) => a - b),
        );
        assert.equal(new Set(gens).size, gens.length, 'each run claimed a newer generation');
      }
      assert.ok(maxConcurrency(all) <= 3, 'never beyond the budget');
    });
  });
}
