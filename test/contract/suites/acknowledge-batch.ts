/**
 * pc_aps_acknowledge_batch (Store.acknowledgeBatch) and the supervisor's group commit on top of
 * it (src/runtime/ack-batcher.ts), on both backends: per key exactly the semantics of
 * pc_aps_ack_invocation, in one transaction with one term check; all or nothing; results in input
 * order. The batcher shares one transaction between concurrent requests, isolates a bad key, and
 * rejects every request of a lost term.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AckBatcher } from '../../../src/runtime/ack-batcher.ts';
import { InvalidArgumentError, StoreError, TermLostError } from '../../../src/store/errors.ts';
import type { AckRequest, IntentSnapshot, Store, Term } from '../../../src/store/types.ts';
import { createBackend, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';
import { takeTerm, rejectsWithCode } from '../../helpers/store-asserts.ts';

/** No test here relies on expiry, and a loaded machine took over 30 s for the 1,000-key cases. */
const LONG_TTL_MS = 600_000;

function gens(i: IntentSnapshot | null) {
  assert.ok(i, 'intent exists');
  return { dirty: i.dirtyGeneration, clean: i.cleanGeneration, requested: i.requestedGeneration, handled: i.handledGeneration };
}

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  {
    describe(`[${backend}] pc_aps_acknowledge_batch`, () => {
      let fx: BackendFixture;
      let other: Store;
      let term: Term;
      before(async () => {
        fx = await createBackend(backend);
        other = fx.openStore();
        term = await takeTerm(fx.store, 'h1', LONG_TTL_MS);
      });
      after(async () => {
        await fx.cleanup();
      });

      async function owe(binding: string, scope: string, requests: number, dirty = 0): Promise<void> {
        for (let i = 0; i < requests; i++) await fx.store.acceptRequest(binding, scope);
        for (let i = 0; i < dirty; i++) await fx.store.markDirty(binding, scope);
      }

      test('each key: handled to its claim (never a newer request), clean to its snapshot; results in input order', async () => {
        const b = 'batch-semantics';
        await owe(b, 'k1', 2, 1); // requested 2, dirty 1
        await owe(b, 'k2', 1, 3); // requested 1, dirty 3
        await owe(b, 'k3', 1); // requested 1
        await fx.store.acknowledge(term, { bindingName: b, scopeId: 'k3', claimedRequestGeneration: 1 }); // already handled
        const acks: AckRequest[] = [
          { bindingName: b, scopeId: 'k2', claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 2 },
          { bindingName: b, scopeId: 'k3', claimedRequestGeneration: 1 },
          { bindingName: b, scopeId: 'k1', claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 1 },
        ];
        const results = await fx.store.acknowledgeBatch(term, b, acks);
        assert.deepEqual(
          results.map((r) => [r.scopeId, r.outcome, r.requestedGeneration, r.handledGeneration, r.dirtyGeneration, r.cleanGeneration]),
          [
            ['k2', 'acknowledged', 1, 1, 3, 2],
            ['k3', 'already_handled', 1, 1, 0, 0],
            ['k1', 'acknowledged', 2, 1, 1, 1],
          ],
        );
        // Committed, and what another connection reads is what the results said.
        assert.deepEqual(gens(await other.readIntent(b, 'k1')), { dirty: 1, clean: 1, requested: 2, handled: 1 }, 'a newer request stays owed');
        assert.deepEqual(gens(await other.readIntent(b, 'k2')), { dirty: 3, clean: 2, requested: 1, handled: 1 }, 'clean only to the snapshot, not to dirty');
        // Never backwards: an older claim and an older clean confirmation change nothing.
        const again = await fx.store.acknowledgeBatch(term, b, [
          { bindingName: b, scopeId: 'k2', claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 1 },
        ]);
        assert.deepEqual([again[0].outcome, again[0].handledGeneration, again[0].cleanGeneration], ['already_handled', 1, 2]);
      });

      test('all or nothing: a lost term, a missing key or a refused ack anywhere in the batch writes nothing', async () => {
        const b = 'batch-atomic';
        await owe(b, 'a', 1, 1);
        await owe(b, 'b', 1, 1);
        const start = { a: gens(await fx.store.readIntent(b, 'a')), b: gens(await fx.store.readIntent(b, 'b')) };
        const good: AckRequest = { bindingName: b, scopeId: 'a', claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 1 };
        await assert.rejects(fx.store.acknowledgeBatch({ ...term, supervisorGeneration: term.supervisorGeneration + 1 }, b, [good]), TermLostError);
        await assert.rejects(fx.store.acknowledgeBatch({ ...term, holderId: 'someone-else' }, b, [good]), TermLostError);
        await rejectsWithCode(
          fx.store.acknowledgeBatch(term, b, [good, { bindingName: b, scopeId: 'missing', claimedRequestGeneration: 1 }]),
          'intent_not_found',
        );
        await rejectsWithCode(fx.store.acknowledgeBatch(term, b, [good, { bindingName: b, scopeId: 'b', claimedRequestGeneration: 2 }]), 'ack_beyond_request');
        await rejectsWithCode(
          fx.store.acknowledgeBatch(term, b, [good, { bindingName: b, scopeId: 'b', claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 2 }]),
          'clean_beyond_dirty',
        );
        await rejectsWithCode(fx.store.acknowledgeBatch(term, b, [good, good]), 'invalid_argument');
        assert.deepEqual({ a: gens(await other.readIntent(b, 'a')), b: gens(await other.readIntent(b, 'b')) }, start, 'refused batches change nothing');
      });

      test('the raw operation refuses malformed lists (lengths differ, empty items, non-numbers)', async () => {
        const b = 'batch-raw';
        await owe(b, 'x', 1);
        const base = { supervisor_key: term.supervisorKey, holder_id: term.holderId, supervisor_generation: term.supervisorGeneration, binding_name: b };
        const call = (p: Record<string, unknown>) =>
          (fx.store as unknown as { callOperation(op: string, p: Record<string, unknown>): Promise<unknown> }).callOperation('pc_aps_acknowledge_batch', {
            ...base,
            ...p,
          });
        await rejectsWithCode(call({ scope_ids: 'x,y', claimed_generations: '1', clean_throughs: ',' }), 'invalid_argument');
        await rejectsWithCode(call({ scope_ids: 'x', claimed_generations: '1', clean_throughs: ',' }), 'invalid_argument');
        await rejectsWithCode(call({ scope_ids: '', claimed_generations: '', clean_throughs: '' }), 'invalid_argument');
        await rejectsWithCode(call({ scope_ids: 'x', claimed_generations: '0', clean_throughs: '' }), 'invalid_argument');
        await rejectsWithCode(call({ scope_ids: 'x', claimed_generations: 'one', clean_throughs: '' }), 'invalid_argument');
        assert.deepEqual(gens(await other.readIntent(b, 'x')), { dirty: 0, clean: 0, requested: 1, handled: 0 });
        // The adapter refuses what the operation would refuse, before any SQL.
        await assert.rejects(fx.store.acknowledgeBatch(term, b, []), InvalidArgumentError);
        await assert.rejects(fx.store.acknowledgeBatch(term, b, [{ bindingName: 'another', scopeId: 'x', claimedRequestGeneration: 1 }]), InvalidArgumentError);
      });

      test('scope ids with quotes, backslashes and non-ASCII text survive the lists', async () => {
        const b = 'batch-text';
        const scopes = ["it's", 'back\\slash', 'ключ-5', 'a b', '%_'];
        for (const s of scopes) await owe(b, s, 1);
        const results = await fx.store.acknowledgeBatch(
          term,
          b,
          scopes.map((s) => ({ bindingName: b, scopeId: s, claimedRequestGeneration: 1 })),
        );
        assert.deepEqual(
          results.map((r) => [r.scopeId, r.outcome]),
          scopes.map((s) => [s, 'acknowledged']),
        );
        for (const s of scopes) assert.equal((await other.readIntent(b, s))!.handledGeneration, 1, s);
      });

      test('1000 keys in one call', async () => {
        const b = 'batch-large';
        const scopes = Array.from({ length: 1000 }, (_, i) => `scope-${String(i).padStart(4, '0')}-${'x'.repeat(40)}`);
        if (backend === 'sqlite') {
          for (const s of scopes) await owe(b, s, 1);
        } else {
          await fx.store.transaction(async (tx) => {
            for (const s of scopes) await fx.store.acceptRequest(b, s, tx);
          });
        }
        const results = await fx.store.acknowledgeBatch(
          term,
          b,
          scopes.map((s) => ({ bindingName: b, scopeId: s, claimedRequestGeneration: 1 })),
        );
        assert.equal(results.filter((r) => r.outcome === 'acknowledged').length, 1000);
        const owed = await other.listOwedRequests(b, 0, 10);
        assert.equal(owed.keys.length, 0, 'nothing owed any more');
        await assert.rejects(
          fx.store.acknowledgeBatch(
            term,
            b,
            [...scopes, 'one-more'].map((s) => ({ bindingName: b, scopeId: s, claimedRequestGeneration: 1 })),
          ),
          InvalidArgumentError,
        );
      });
    });

    describe(`[${backend}] supervisor group commit (AckBatcher)`, () => {
      let fx: BackendFixture;
      let other: Store;
      let term: Term;
      before(async () => {
        fx = await createBackend(backend);
        other = fx.openStore();
        term = await takeTerm(fx.store, 'h1', LONG_TTL_MS);
      });
      after(async () => {
        await fx.cleanup();
      });

      test('requests of one event-loop turn share one transaction; every caller gets its committed row', async () => {
        const b = 'batcher';
        for (let i = 0; i < 20; i++) await fx.store.acceptRequest(b, `k${i}`);
        const batcher = new AckBatcher(fx.store);
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => batcher.acknowledge(term, { bindingName: b, scopeId: `k${i}`, claimedRequestGeneration: 1 })),
        );
        assert.deepEqual(
          results.map((r) => [r.scopeId, r.handledGeneration]),
          Array.from({ length: 20 }, (_, i) => [`k${i}`, 1]),
        );
        assert.equal(batcher.stats.transactions, 1, 'one transaction for the whole turn');
        assert.equal(batcher.stats.acknowledgements, 20);
        for (let i = 0; i < 20; i++) assert.equal((await other.readIntent(b, `k${i}`))!.handledGeneration, 1);
      });

      test('one bad key does not fail the others: the batch is retried key by key', async () => {
        const b = 'batcher-isolation';
        for (let i = 0; i < 3; i++) await fx.store.acceptRequest(b, `k${i}`);
        const batcher = new AckBatcher(fx.store);
        const outcomes = await Promise.allSettled([
          batcher.acknowledge(term, { bindingName: b, scopeId: 'k0', claimedRequestGeneration: 1 }),
          batcher.acknowledge(term, { bindingName: b, scopeId: 'k1', claimedRequestGeneration: 5 }), // beyond its request
          batcher.acknowledge(term, { bindingName: b, scopeId: 'k2', claimedRequestGeneration: 1 }),
        ]);
        assert.deepEqual(
          outcomes.map((o) => o.status),
          ['fulfilled', 'rejected', 'fulfilled'],
        );
        const rejected = outcomes[1] as PromiseRejectedResult;
        assert.ok(rejected.reason instanceof StoreError && rejected.reason.code === 'ack_beyond_request');
        assert.equal((await other.readIntent(b, 'k0'))!.handledGeneration, 1);
        assert.equal((await other.readIntent(b, 'k1'))!.handledGeneration, 0);
        assert.equal((await other.readIntent(b, 'k2'))!.handledGeneration, 1);
      });

      test('a lost term rejects every request of the batch and writes nothing', async () => {
        const b = 'batcher-term';
        for (let i = 0; i < 3; i++) await fx.store.acceptRequest(b, `k${i}`);
        const batcher = new AckBatcher(fx.store);
        const stale = term;
        await fx.store.invalidateTerm('global'); // hand over: the old term is gone
        term = await takeTerm(fx.store, 'h2', LONG_TTL_MS);
        const outcomes = await Promise.allSettled(
          [0, 1, 2].map((i) => batcher.acknowledge(stale, { bindingName: b, scopeId: `k${i}`, claimedRequestGeneration: 1 })),
        );
        for (const o of outcomes) assert.ok(o.status === 'rejected' && o.reason instanceof TermLostError, 'every request sees the lost term');
        for (let i = 0; i < 3; i++) assert.equal((await other.readIntent(b, `k${i}`))!.handledGeneration, 0);
      });
    });
  }
}
