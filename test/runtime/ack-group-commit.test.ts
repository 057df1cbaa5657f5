/**
 * The supervisor's group commit while a commit is under way (src/runtime/ack-batcher.ts with
 * TurnBatch maxInFlight 1), on both backends: acknowledgements that arrive while a commit of the
 * same term and binding is in flight wait and share the next transaction, and waiting never lets
 * a lost term through: a stale term's acknowledgement is refused, and a batch held while its term
 * was taken over is refused as a whole when it commits, writing nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AckBatcher } from '../../src/runtime/ack-batcher.ts';
import { TermLostError } from '../../src/store/errors.ts';
import type { Store, Term } from '../../src/store/types.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { takeTerm } from '../helpers/store-asserts.ts';

/** A new generation for `holder`: the previous term is invalidated first. */
async function freshTerm(store: Store, holder: string): Promise<Term> {
  await store.invalidateTerm('global');
  return takeTerm(store, holder);
}

/**
 * The store with its acknowledgement calls held at a gate until release(); counts the calls. A
 * group of several is `acknowledgeBatch` on MySQL and, on SQLite, one `transaction` holding one
 * `ackInvocation` per request (ack-batcher.ts): both are counted as op 'acknowledgeBatch'.
 */
function gated(store: Store) {
  let open!: () => void;
  let gate = new Promise<void>((r) => {
    open = r;
  });
  const calls: Array<{ op: string; keys: number }> = [];
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop === 'ackInvocation')
        return (...args: unknown[]) => {
          if (args[2] !== undefined) calls[calls.length - 1].keys += 1;
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      if (prop !== 'acknowledge' && prop !== 'acknowledgeBatch' && prop !== 'transaction') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: unknown[]) => {
        const keys = prop === 'acknowledge' ? 1 : prop === 'transaction' ? 0 : (args[2] as unknown[]).length;
        calls.push({ op: prop === 'transaction' ? 'acknowledgeBatch' : String(prop), keys });
        await gate;
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
  return {
    store: proxy as Store,
    calls,
    release() {
      open();
    },
    hold() {
      gate = new Promise<void>((r) => {
        open = r;
      });
    },
  };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

for (const backend of BACKENDS) {
  describe(`[${backend}] group commit while a commit is under way`, () => {
    let fx: BackendFixture;
    let other: Store;
    before(async () => {
      fx = await createBackend(backend);
      other = fx.openStore();
    });
    after(async () => {
      await fx.cleanup();
    });

    test('requests arriving in later turns during a commit share the next transaction; each caller gets its committed row', async () => {
      const term = await freshTerm(fx.store, 'g1');
      const b = 'inflight';
      for (let i = 0; i < 4; i++) await fx.store.acceptRequest(b, `k${i}`);
      const g = gated(fx.store);
      const batcher = new AckBatcher(g.store);
      const first = batcher.acknowledge(term, { bindingName: b, scopeId: 'k0', claimedRequestGeneration: 1 });
      await waitFor(() => g.calls.length === 1);
      const later: Array<Promise<unknown>> = [];
      for (let i = 1; i < 4; i++) {
        later.push(batcher.acknowledge(term, { bindingName: b, scopeId: `k${i}`, claimedRequestGeneration: 1 }));
        await turn(); // separate event-loop turns: without the in-flight hold each would be its own call
      }
      assert.equal(g.calls.length, 1, 'nothing else started while the first commit is under way');
      g.release();
      const rows = (await Promise.all([first, ...later])) as Array<{ scopeId: string; handledGeneration: number }>;
      assert.deepEqual(
        rows.map((r) => [r.scopeId, r.handledGeneration]),
        [
          ['k0', 1],
          ['k1', 1],
          ['k2', 1],
          ['k3', 1],
        ],
      );
      assert.deepEqual(g.calls, [
        { op: 'acknowledge', keys: 1 },
        { op: 'acknowledgeBatch', keys: 3 },
      ]);
      assert.equal(batcher.stats.transactions, 2);
      for (let i = 0; i < 4; i++) assert.equal((await other.readIntent(b, `k${i}`))!.handledGeneration, 1);
    });

    test('attack: a batch held while its term is taken over is refused as a whole when it commits; the new term is not blocked by it', async () => {
      const old = await freshTerm(fx.store, 'g2');
      const b = 'inflight-takeover';
      for (let i = 0; i < 4; i++) await fx.store.acceptRequest(b, `k${i}`);
      const g = gated(fx.store);
      const batcher = new AckBatcher(g.store);
      const first = batcher.acknowledge(old, { bindingName: b, scopeId: 'k0', claimedRequestGeneration: 1 });
      await waitFor(() => g.calls.length === 1);
      const held = [1, 2].map((i) => batcher.acknowledge(old, { bindingName: b, scopeId: `k${i}`, claimedRequestGeneration: 1 }));
      await turn();
      // Take-over while the old term's acknowledgements are still waiting in the client.
      const next = await freshTerm(fx.store, 'g3');
      // The new term's acknowledgement is its own group: it does not wait for the old term's commit.
      const fresh = batcher.acknowledge(next, { bindingName: b, scopeId: 'k3', claimedRequestGeneration: 1 });
      await waitFor(() => g.calls.length === 2);
      g.release();
      const outcomes = await Promise.allSettled([first, ...held, fresh]);
      for (const o of outcomes.slice(0, 3))
        assert.ok(o.status === 'rejected' && o.reason instanceof TermLostError, `the old term is refused: ${JSON.stringify(o)}`);
      assert.equal(outcomes[3].status, 'fulfilled', 'the live term commits');
      assert.deepEqual(
        g.calls.map((c) => c.op),
        ['acknowledge', 'acknowledge', 'acknowledgeBatch'],
        'the held pair still went to the database, as one batch',
      );
      for (let i = 0; i < 3; i++) assert.equal((await other.readIntent(b, `k${i}`))!.handledGeneration, 0, `k${i}: nothing written under the lost term`);
      assert.equal((await other.readIntent(b, 'k3'))!.handledGeneration, 1);
    });

    test('attack: a stale term joining during a live commit is refused; the live term’s held requests commit', async () => {
      const stale = await freshTerm(fx.store, 'g4');
      const live = await freshTerm(fx.store, 'g5');
      const b = 'inflight-stale';
      for (let i = 0; i < 4; i++) await fx.store.acceptRequest(b, `k${i}`);
      const g = gated(fx.store);
      const batcher = new AckBatcher(g.store);
      const first = batcher.acknowledge(live, { bindingName: b, scopeId: 'k0', claimedRequestGeneration: 1 });
      await waitFor(() => g.calls.length === 1);
      const liveHeld = batcher.acknowledge(live, { bindingName: b, scopeId: 'k1', claimedRequestGeneration: 1 });
      const staleOnes = [2, 3].map((i) => batcher.acknowledge(stale, { bindingName: b, scopeId: `k${i}`, claimedRequestGeneration: 1 }));
      await turn();
      g.release();
      const outcomes = await Promise.allSettled([first, liveHeld, ...staleOnes]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'fulfilled', 'rejected', 'rejected'],
      );
      for (const o of outcomes.slice(2)) assert.ok(o.status === 'rejected' && o.reason instanceof TermLostError);
      assert.equal((await other.readIntent(b, 'k0'))!.handledGeneration, 1);
      assert.equal((await other.readIntent(b, 'k1'))!.handledGeneration, 1);
      assert.equal((await other.readIntent(b, 'k2'))!.handledGeneration, 0);
      assert.equal((await other.readIntent(b, 'k3'))!.handledGeneration, 0);
    });

    test('attack: a group spanning bindings (SQLite: one transaction) held across a take-over writes nothing on any binding; a bad key fails alone', async () => {
      const old = await freshTerm(fx.store, 'g6');
      const bindings = ['span-a', 'span-b', 'span-c'];
      for (const b of bindings) await fx.store.acceptRequest(b, 'k');
      const g = gated(fx.store);
      const batcher = new AckBatcher(g.store);
      const first = batcher.acknowledge(old, { bindingName: 'span-a', scopeId: 'k', claimedRequestGeneration: 1 });
      await waitFor(() => g.calls.length === 1);
      const held = ['span-b', 'span-c'].map((b) => batcher.acknowledge(old, { bindingName: b, scopeId: 'k', claimedRequestGeneration: 1 }));
      await turn();
      const next = await freshTerm(fx.store, 'g7');
      g.release();
      const outcomes = await Promise.allSettled([first, ...held]);
      for (const o of outcomes) assert.ok(o.status === 'rejected' && o.reason instanceof TermLostError, `refused: ${JSON.stringify(o)}`);
      for (const b of bindings) assert.equal((await other.readIntent(b, 'k'))!.handledGeneration, 0, `${b}: nothing written under the lost term`);
      // SQLite: two bindings, one transaction (refused at its first key); MySQL: one call per binding.
      assert.deepEqual(
        g.calls.slice(1).map((c) => c.op),
        backend === 'sqlite' ? ['acknowledgeBatch'] : ['acknowledge', 'acknowledge'],
      );

      // Under the live term: one key claims beyond its request; the others of its group still commit.
      const g2 = gated(fx.store);
      g2.release();
      const live = new AckBatcher(g2.store);
      await fx.store.acceptRequest('span-d', 'k');
      const results = await Promise.allSettled([
        live.acknowledge(next, { bindingName: 'span-a', scopeId: 'k', claimedRequestGeneration: 1 }),
        live.acknowledge(next, { bindingName: 'span-b', scopeId: 'k', claimedRequestGeneration: 5 }),
        live.acknowledge(next, { bindingName: 'span-d', scopeId: 'k', claimedRequestGeneration: 1 }),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.equal((await other.readIntent('span-a', 'k'))!.handledGeneration, 1);
      assert.equal((await other.readIntent('span-b', 'k'))!.handledGeneration, 0);
      assert.equal((await other.readIntent('span-d', 'k'))!.handledGeneration, 1);
    });
  });
}
