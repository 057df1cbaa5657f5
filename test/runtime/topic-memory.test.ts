// Acceptance A3 and A4 (RFC 12.3, 12.4; sections 3, 4, 5, 7) with the topic-memory reference
// family (ordered source journal, persisted cursor, window of 3 sources per invocation; a poisoned
// source blocks its scope and is never skipped), run by its real processor in worker processes.
//
//   A3: scope B keeps failing on its first source B1 (backoff, retried without limit) and its
//       cursor never passes B1, so B2 waits; scope A is processed meanwhile, and a source A3
//       added after A completed is processed by a later automatic check.
//   A4: 7 sources with a window of 3: each invocation succeeds after 3 sources, the remaining
//       work stays dirty (dirty > clean) and is taken by the next automatic checks.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appendTopicSource, topicMemory, TOPIC_MEMORY_BINDING } from '../../src/families/topic-memory.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { P, partitionOf, startRuntime, statsOf } from '../fixtures/runtime-harness.ts';

async function cursorOf(fx: BackendFixture, scopeId: string): Promise<number> {
  const rows = await fx.query('SELECT through_seq FROM ref_topic_cursors WHERE scope_id = ?', [scopeId]);
  return rows.length === 0 ? 0 : Number(rows[0].through_seq);
}

async function digestsOf(fx: BackendFixture, scopeId: string): Promise<Array<[number, number]>> {
  const rows = await fx.query('SELECT from_seq, through_seq FROM ref_topic_digests WHERE scope_id = ? ORDER BY through_seq', [scopeId]);
  return rows.map((r) => [Number(r.from_seq), Number(r.through_seq)]);
}

async function scanGeneration(fx: BackendFixture): Promise<number> {
  const rows = await fx.query('SELECT scan_generation FROM pc_artifact_processing_binding_states WHERE binding_name = ?', [TOPIC_MEMORY_BINDING]);
  return rows.length === 0 ? 0 : Number(rows[0].scan_generation);
}

for (const backend of BACKENDS) {
  describe(`[${backend}] A3/A4 topic-memory: failing scope isolation, strict order, partial progress`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;

    before(async () => {
      fx = await createBackend(backend);
      // Scope A: two sources. Scope B: B1 poisoned, then B2.
      await appendTopicSource(fx.store, 'A', { words: 10 });
      await appendTopicSource(fx.store, 'A', { words: 11 });
      await appendTopicSource(fx.store, 'B', { words: 5, poison: true });
      await appendTopicSource(fx.store, 'B', { words: 6 });
      runtime = await startRuntime(fx, [topicMemory], {
        env: {
          [`${P}TOPIC_MEMORY_SCHEDULE_SECONDS`]: '1',
          [`${P}TOPIC_MEMORY_MAX_WORKERS`]: '2',
        },
      });
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('A3: B1 keeps failing with backoff and B2 never overtakes it; A is processed; A3 added later is processed in a later check', async () => {
      await waitFor(async () => (await cursorOf(fx, 'A')) === 2, 20_000);
      const a = await fx.store.readIntent(TOPIC_MEMORY_BINDING, 'A');
      assert.equal(a!.cleanGeneration, a!.dirtyGeneration, 'A completed its work');
      assert.equal(a!.handledGeneration, a!.requestedGeneration);

      // B fails repeatedly, in backoff: consecutive failures grow, the key stays owed.
      const partition = partitionOf(runtime, 'topic-memory');
      await waitFor(() => (partition.backoff.get('B')?.consecutiveFailures ?? 0) >= 2, 20_000);
      assert.equal(partition.backoff.get('B')!.lastReason, 'failed');
      assert.equal(await cursorOf(fx, 'B'), 0, 'the cursor of B never passes the poisoned source');
      assert.deepEqual(await digestsOf(fx, 'B'), [], 'B2 was not consumed before B1');
      const b = await fx.store.readIntent(TOPIC_MEMORY_BINDING, 'B');
      assert.ok(b!.requestedGeneration > b!.handledGeneration, 'B keeps its retry obligation');
      assert.ok(b!.dirtyGeneration > b!.cleanGeneration);

      // A new source of A after A completed: admitted by a later automatic check, not blocked by B.
      const generationBefore = await scanGeneration(fx);
      await runtime.store.transaction((tx) => appendTopicSource(runtime.store, 'A', { words: 12 }, tx));
      runtime.notifyDirty('topic-memory');
      await waitFor(async () => (await cursorOf(fx, 'A')) === 3, 20_000);
      assert.ok((await scanGeneration(fx)) > generationBefore, 'A3 was admitted by a later scan');
      assert.deepEqual(await digestsOf(fx, 'A'), [
        [1, 2],
        [3, 3],
      ]);
      assert.equal(await cursorOf(fx, 'B'), 0, 'B is still blocked at B1');
      assert.ok((partition.backoff.get('B')?.consecutiveFailures ?? 0) >= 2);

      // Once B1 can be processed, B continues in order from its cursor: B1 then B2, once each.
      await fx.query('UPDATE ref_topic_sources SET poison = 0 WHERE scope_id = ? AND seq = 1', ['B']);
      await waitFor(async () => (await cursorOf(fx, 'B')) === 2, 20_000);
      assert.deepEqual(await digestsOf(fx, 'B'), [[1, 2]]);
      await waitFor(() => partition.backoff.get('B') === undefined, 5_000);
    });

    test('A4: a window of 3 over 7 sources succeeds each time, leaves dirty > clean, and the next checks finish the rest', async () => {
      await runtime.store.transaction(async (tx) => {
        for (let i = 0; i < 7; i += 1) await appendTopicSource(runtime.store, 'P', { words: 1 }, tx);
      });
      runtime.notifyDirty('topic-memory');
      // Observe the key between invocations: after 3 and after 6 sources it has succeeded
      // (handled caught up with its admission) yet still has ordinary work (dirty > clean).
      const seen = new Map<number, { dirtyLeft: boolean; acknowledged: boolean }>();
      await waitFor(async () => {
        const cursor = await cursorOf(fx, 'P');
        const i = await fx.store.readIntent(TOPIC_MEMORY_BINDING, 'P');
        if (cursor > 0 && cursor < 7 && !seen.has(cursor)) {
          seen.set(cursor, { dirtyLeft: i!.dirtyGeneration > i!.cleanGeneration, acknowledged: i!.handledGeneration >= cursor / 3 });
        }
        return cursor === 7;
      }, 20_000);
      assert.deepEqual(seen.get(3), { dirtyLeft: true, acknowledged: true }, 'after the first window: success, rest still dirty');
      if (seen.has(6)) assert.deepEqual(seen.get(6), { dirtyLeft: true, acknowledged: true });
      assert.deepEqual(await digestsOf(fx, 'P'), [
        [1, 3],
        [4, 6],
        [7, 7],
      ]);
      const done = await fx.store.readIntent(TOPIC_MEMORY_BINDING, 'P');
      assert.equal(done!.cleanGeneration, done!.dirtyGeneration, 'clean only once the window reached the end');
      assert.equal(done!.requestedGeneration, 3, 'three separate automatic admissions');
      assert.equal(done!.handledGeneration, 3);
      assert.equal(statsOf(runtime, 'topic-memory').failures.not_acknowledged ?? 0, 0);
    });
  });
}
