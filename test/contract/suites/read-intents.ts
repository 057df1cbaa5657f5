/**
 * pc_aps_read_intents (Store.readIntents), on both backends: for each key exactly what
 * pc_aps_read_intent returns, in input order, null for a key never registered; and the
 * supervisor-side IntentReader, which turns the reads of one synchronous turn into one call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { IntentReader } from '../../../src/runtime/intent-reader.ts';
import { InvalidArgumentError, StoreError } from '../../../src/store/errors.ts';
import type { Store } from '../../../src/store/types.ts';
import { createBackend, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  {
    describe(`[${backend}] pc_aps_read_intents`, () => {
      let fx: BackendFixture;
      before(async () => {
        fx = await createBackend(backend);
      });
      after(async () => {
        await fx.cleanup();
      });

      test('each key as pc_aps_read_intent reads it, in input order; null where never registered', async () => {
        const b = 'read-many';
        const scopes = ['c', "it's", 'back\\slash', 'ключ', 'a'];
        for (const [i, s] of scopes.entries()) {
          for (let r = 0; r <= i; r++) await fx.store.acceptRequest(b, s);
          for (let d = 0; d < i; d++) await fx.store.markDirty(b, s);
        }
        const asked = ['a', 'missing', ...scopes.slice(0, 4)];
        const many = await fx.store.readIntents(b, asked);
        const one = await Promise.all(asked.map((s) => fx.store.readIntent(b, s)));
        assert.deepEqual(many, one);
        assert.equal(many[1], null);
        assert.equal(many[0]!.requestedGeneration, 5);
        assert.equal(many[0]!.dirtyGeneration, 4);
      });

      test('refuses empty and oversized lists before any SQL; the raw operation refuses an empty list', async () => {
        await assert.rejects(fx.store.readIntents('read-many', []), InvalidArgumentError);
        await assert.rejects(
          fx.store.readIntents(
            'read-many',
            Array.from({ length: 1001 }, (_, i) => `k${i}`),
          ),
          InvalidArgumentError,
        );
        await assert.rejects(fx.store.readIntents('read-many', ['a,b']), InvalidArgumentError);
        if (backend === 'mysql') {
          const call = (fx.store as unknown as { callOperation(op: string, p: Record<string, unknown>): Promise<unknown> }).callOperation;
          await assert.rejects(
            call.call(fx.store, 'pc_aps_read_intents', { binding_name: 'read-many', scope_ids: '' }),
            (e: unknown) => e instanceof StoreError && e.code === 'invalid_argument',
          );
        }
      });

      test('IntentReader: reads of one turn become one call (SQLite: one key read each, no round trip to save); every caller gets its own key', async () => {
        const b = 'read-turn';
        for (let i = 0; i < 10; i++) for (let r = 0; r <= i; r++) await fx.store.acceptRequest(b, `k${i}`);
        let batchCalls = 0;
        let singleCalls = 0;
        const counting = new Proxy(fx.store, {
          get(target, prop, receiver) {
            if (prop === 'readIntents')
              return (...args: Parameters<Store['readIntents']>) => {
                batchCalls++;
                return target.readIntents(...args);
              };
            if (prop === 'readIntent')
              return (...args: Parameters<Store['readIntent']>) => {
                singleCalls++;
                return target.readIntent(...args);
              };
            return Reflect.get(target, prop, receiver);
          },
        });
        const reader = new IntentReader(counting);
        const got = await Promise.all(Array.from({ length: 10 }, (_, i) => reader.read(b, `k${i}`)));
        assert.deepEqual(
          got.map((g) => g!.requestedGeneration),
          Array.from({ length: 10 }, (_, i) => i + 1),
        );
        const sqlite = fx.store.backend === 'sqlite';
        assert.deepEqual([batchCalls, singleCalls], sqlite ? [0, 10] : [1, 0]);
        assert.equal((await reader.read(b, 'k3'))!.requestedGeneration, 4);
        assert.deepEqual([batchCalls, singleCalls], sqlite ? [0, 11] : [1, 1], 'a lone read uses pc_aps_read_intent');
      });
    });
  }
}
