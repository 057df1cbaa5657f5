// Smoke contract test: the whole life of one key on each backend (acquire, mark, scan, admit,
// discover, acknowledge, finish). Detailed semantics live in the other contract files.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createBackend, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  {
    describe(`[${backend}] smoke: one key through a scan and an acknowledgement`, () => {
      let fx: BackendFixture;
      before(async () => {
        fx = await createBackend(backend);
      });
      after(async () => {
        await fx.cleanup();
      });

      test('mark, scan, admit, discover, ack', async () => {
        const { store } = fx;
        const acquired = await store.acquireTerm('global', 'holder-a', 10_000);
        assert.equal(acquired.outcome, 'acquired');
        assert.equal(acquired.supervisorGeneration, 1);
        const t = { supervisorKey: 'global', holderId: 'holder-a', supervisorGeneration: acquired.supervisorGeneration };

        const marked = await store.markDirty('topic-memory', 'scope-1');
        assert.equal(marked.dirtyGeneration, 1);

        const scan = await store.beginScan(t, 'topic-memory', { kind: 'interval', intervalSeconds: 300 });
        assert.equal(scan.outcome, 'started');
        const page = await store.admitScanPage(t, 'topic-memory', scan.scanGeneration, 0, 500);
        assert.deepEqual(
          page.keys.map((k) => [k.scopeId, k.requestedGeneration]),
          [['scope-1', 1]],
        );
        assert.equal(page.exhausted, true);
        assert.equal((await store.finishScan(t, 'topic-memory', scan.scanGeneration)).outcome, 'finished');

        const owed = await store.listOwedRequests('topic-memory', 0, 100);
        assert.deepEqual(
          owed.keys.map((k) => k.scopeId),
          ['scope-1'],
        );

        const snapshot = await store.readIntent('topic-memory', 'scope-1');
        assert.ok(snapshot);
        const ack = await store.transaction(async (tx) =>
          store.ackInvocation(
            t,
            {
              bindingName: 'topic-memory',
              scopeId: 'scope-1',
              claimedRequestGeneration: snapshot.requestedGeneration,
              cleanThroughDirtyGeneration: snapshot.dirtyGeneration,
            },
            tx,
          ),
        );
        assert.equal(ack.outcome, 'acknowledged');
        assert.equal((await store.listOwedRequests('topic-memory', 0, 100)).keys.length, 0);
      });
    });
  }
}
