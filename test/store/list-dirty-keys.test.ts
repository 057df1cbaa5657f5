// pc_aps_list_dirty_keys on both backends: the keys of one binding with dirty > clean, by
// pending sequence, in keyset pages; another binding's keys and clean keys are not listed; the
// read writes nothing (no scan mark, no request).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { InvalidArgumentError } from '../../src/store/errors.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] pc_aps_list_dirty_keys`, () => {
    let fx: BackendFixture;
    after(async () => {
      await fx?.cleanup();
    });

    test('pages through the dirty keys of one binding and writes nothing', async () => {
      fx = await createBackend(backend);
      const store = fx.store as BaseStore;
      for (const s of ['a', 'b', 'c', 'd']) await store.markDirty('fx.one', s);
      await store.acceptRequest('fx.one', 'owed-only');
      await store.markDirty('fx.two', 'other');
      const first = await store.listDirtyKeys('fx.one', 0, 3);
      assert.deepEqual(
        first.keys.map((k) => k.scopeId),
        ['a', 'b', 'c'],
      );
      assert.equal(first.exhausted, false);
      const second = await store.listDirtyKeys('fx.one', first.nextAfterSequence, 3);
      assert.deepEqual(
        second.keys.map((k) => [k.scopeId, k.dirtyGeneration, k.cleanGeneration, k.requestedGeneration]),
        [['d', 1, 0, 0]],
      );
      assert.equal(second.exhausted, true);
      const d = await store.readIntent('fx.one', 'd');
      assert.equal(d?.lastAutoScanGeneration, 0, 'no scan mark');
      assert.equal(d?.requestedGeneration, 0, 'no request');
      await assert.rejects(store.listDirtyKeys('fx.one', 0, 0), InvalidArgumentError);
      await assert.rejects(store.listDirtyKeys('fx.one', -1, 10), InvalidArgumentError);
    });
  });
}
