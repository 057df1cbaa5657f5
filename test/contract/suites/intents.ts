// Contract of the intent operations (RFC sections 3 and 5, acceptance item 8): markDirty,
// acceptRequest, readIntent, listOwedRequests and ackInvocation, on both backends.
//   * registration: pending_sequence assigned once, unique, increasing in registration order;
//   * the two generation pairs move by exactly one per mark/request and never cross-affect;
//   * marks and requests join the caller's transaction (commit together, roll back together),
//     through store.transaction and through a raw backend handle; no term is needed;
//   * owed-request discovery pages by pending_sequence and returns each owed key exactly once;
//   * acknowledgement never goes beyond requested/dirty, never backwards, and never swallows a
//     request or dirty mark that arrived while the invocation ran (A8);
//   * the table invariants are enforced by CHECK constraints.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type BetterSqlite3 from 'better-sqlite3';
import type { PoolConnection } from 'mysql2/promise';
import { TermLostError } from '../../../src/store/errors.ts';
import type { MysqlStore } from '../../../src/store/mysql/mysql-store.ts';
import type { SqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import type { IntentSnapshot, Store, TxHandle } from '../../../src/store/types.ts';
import { createBackend, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';
import { takeTerm, rejectsWithCode } from '../../helpers/store-asserts.ts';

async function mustRead(store: Store, binding: string, scope: string): Promise<IntentSnapshot> {
  const intent = await store.readIntent(binding, scope);
  assert.ok(intent, `intent ${binding}/${scope} should exist`);
  return intent;
}

/** The generations of an intent, for before/after comparisons. */
function gens(i: IntentSnapshot | null) {
  if (!i) return null;
  return {
    pendingSequence: i.pendingSequence,
    dirty: i.dirtyGeneration,
    clean: i.cleanGeneration,
    requested: i.requestedGeneration,
    handled: i.handledGeneration,
    lastAutoScan: i.lastAutoScanGeneration,
  };
}

const DOMAIN_TABLE = {
  sqlite: 'CREATE TABLE test_domain_inputs (id INTEGER PRIMARY KEY, scope_id TEXT NOT NULL, body TEXT NOT NULL)',
  mysql: 'CREATE TABLE test_domain_inputs (id BIGINT AUTO_INCREMENT PRIMARY KEY, scope_id VARCHAR(191) NOT NULL, body TEXT NOT NULL) ENGINE = InnoDB',
};

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  {
    describe(`[${backend}] intents without any term`, () => {
      let fx: BackendFixture;
      before(async () => {
        fx = await createBackend(backend);
      });
      after(async () => {
        await fx.cleanup();
      });

      test('markDirty and acceptRequest need no lease row at all', async () => {
        const leases = await fx.query('SELECT COUNT(*) AS n FROM pc_artifact_processing_leases');
        assert.equal(Number(leases[0].n), 0, 'precondition: a fresh schema has no lease row');
        const b = 'noterm';
        const m = await fx.store.markDirty(b, 's1');
        assert.equal(m.dirtyGeneration, 1);
        const r = await fx.store.acceptRequest(b, 's1');
        assert.equal(r.requestedGeneration, 1);
        assert.equal(r.dirtyGeneration, 1);
        await fx.store.transaction(async (tx) => {
          await fx.store.markDirty(b, 's2', tx);
          await fx.store.acceptRequest(b, 's2', tx);
        });
        assert.deepEqual([(await mustRead(fx.store, b, 's2')).dirtyGeneration, (await mustRead(fx.store, b, 's2')).requestedGeneration], [1, 1]);
        assert.deepEqual(
          (await fx.store.listOwedRequests(b, 0, 10)).keys.map((k) => k.scopeId),
          ['s1', 's2'],
        );
        const after_ = await fx.query('SELECT COUNT(*) AS n FROM pc_artifact_processing_leases');
        assert.equal(Number(after_[0].n), 0, 'marking and requesting must not create a lease row');
      });
    });

    describe(`[${backend}] intents`, () => {
      let fx: BackendFixture;
      let other: Store;
      before(async () => {
        fx = await createBackend(backend);
        other = fx.openStore();
        await fx.query(DOMAIN_TABLE[backend]);
      });
      after(async () => {
        await fx.cleanup();
      });

      async function domainInsert(tx: TxHandle, scope: string, body: string): Promise<void> {
        if (backend === 'sqlite') {
          (tx as BetterSqlite3.Database).prepare('INSERT INTO test_domain_inputs (scope_id, body) VALUES (?, ?)').run(scope, body);
        } else {
          await (tx as PoolConnection).query('INSERT INTO test_domain_inputs (scope_id, body) VALUES (?, ?)', [scope, body]);
        }
      }

      async function domainRows(scope: string): Promise<string[]> {
        const rows = await fx.query('SELECT body FROM test_domain_inputs WHERE scope_id = ? ORDER BY id', [scope]);
        return rows.map((r) => String(r.body));
      }

      test('registration: pending_sequence once, unique, increasing; generations move by one', async () => {
        const { store } = fx;
        const b = 'reg';
        assert.equal(await store.readIntent(b, 'a'), null, 'unknown key reads as null');
        assert.equal(await store.readIntent('reg-never', 'a'), null, 'unknown binding reads as null');

        const a1 = await store.markDirty(b, 'a');
        assert.deepEqual(
          { ...gens(a1), bindingName: a1.bindingName, scopeId: a1.scopeId },
          { pendingSequence: a1.pendingSequence, dirty: 1, clean: 0, requested: 0, handled: 0, lastAutoScan: 0, bindingName: b, scopeId: 'a' },
        );
        assert.ok(a1.pendingSequence > 0, 'a registered key has a positive pending_sequence');

        // acceptRequest registers an unknown key too, with no ordinary work.
        const b1 = await store.acceptRequest(b, 'b');
        assert.deepEqual(gens(b1), { pendingSequence: b1.pendingSequence, dirty: 0, clean: 0, requested: 1, handled: 0, lastAutoScan: 0 });
        // A key of another binding registered in between.
        const x1 = await store.markDirty('reg-other', 'a');
        const c1 = await store.markDirty(b, 'c');
        const d1 = await store.acceptRequest(b, 'd');

        const registered = [a1, b1, c1, d1].map((i) => i.pendingSequence);
        for (let i = 1; i < registered.length; i++) {
          assert.ok(registered[i] > registered[i - 1], `pending_sequence must increase in registration order: ${registered.join(', ')}`);
        }
        const all = [...registered, x1.pendingSequence];
        assert.equal(new Set(all).size, all.length, `pending_sequence must be unique: ${all.join(', ')}`);

        // Later marks and requests: +1 each, pending_sequence unchanged, the other pair untouched.
        for (let n = 2; n <= 6; n++) {
          const m = await store.markDirty(b, 'a');
          assert.equal(m.dirtyGeneration, n);
          assert.equal(m.requestedGeneration, 0);
          assert.equal(m.pendingSequence, a1.pendingSequence);
        }
        for (let n = 1; n <= 3; n++) {
          const r = await store.acceptRequest(b, 'a');
          assert.equal(r.requestedGeneration, n);
          assert.equal(r.dirtyGeneration, 6);
          assert.equal(r.pendingSequence, a1.pendingSequence);
        }
        const b2 = await store.markDirty(b, 'b');
        assert.deepEqual(gens(b2), { ...gens(b1), dirty: 1 });
        const b3 = await store.acceptRequest(b, 'b');
        assert.deepEqual(gens(b3), { ...gens(b1), dirty: 1, requested: 2 });

        assert.deepEqual(gens(await store.readIntent(b, 'a')), {
          pendingSequence: a1.pendingSequence,
          dirty: 6,
          clean: 0,
          requested: 3,
          handled: 0,
          lastAutoScan: 0,
        });
        assert.deepEqual(gens(await store.readIntent(b, 'b')), gens(b3));
        assert.deepEqual(gens(await store.readIntent(b, 'c')), gens(c1));
        assert.deepEqual(gens(await store.readIntent(b, 'd')), gens(d1));
        // The same scope id in another binding is another key.
        assert.deepEqual(gens(await store.readIntent('reg-other', 'a')), gens(x1));
      });

      test('store.transaction: domain write and mark/request commit together, roll back together', async () => {
        const { store } = fx;
        const b = 'txn';
        // Commit path: both become visible together, not before the commit.
        await store.transaction(async (tx) => {
          await domainInsert(tx, 'k1', 'input-1');
          const m = await store.markDirty(b, 'k1', tx);
          assert.equal(m.dirtyGeneration, 1);
          const r = await store.acceptRequest(b, 'k1', tx);
          assert.equal(r.requestedGeneration, 1);
          // The caller's own transaction sees its writes ...
          assert.equal((await store.readIntent(b, 'k1', tx))?.dirtyGeneration, 1);
          // ... another connection does not, until the commit.
          assert.equal(await other.readIntent(b, 'k1'), null, 'uncommitted mark must not be visible to others');
        });
        assert.deepEqual(await domainRows('k1'), ['input-1']);
        const committed = await mustRead(store, b, 'k1');
        assert.equal(committed.dirtyGeneration, 1);
        assert.equal(committed.requestedGeneration, 1);
        assert.equal((await other.readIntent(b, 'k1'))?.dirtyGeneration, 1);

        // Rollback of an existing key: generations unchanged, domain row gone.
        const boom = new Error('domain failure after the mark');
        await assert.rejects(
          store.transaction(async (tx) => {
            await domainInsert(tx, 'k1', 'input-2');
            await store.markDirty(b, 'k1', tx);
            await store.acceptRequest(b, 'k1', tx);
            throw boom;
          }),
          (e) => e === boom,
        );
        assert.deepEqual(await domainRows('k1'), ['input-1']);
        assert.deepEqual(gens(await store.readIntent(b, 'k1')), gens(committed));

        // Rollback of a first registration: the key does not exist afterwards.
        await assert.rejects(
          store.transaction(async (tx) => {
            await domainInsert(tx, 'k2', 'input-x');
            await store.markDirty(b, 'k2', tx);
            throw boom;
          }),
          (e) => e === boom,
        );
        assert.equal(await store.readIntent(b, 'k2'), null);
        await assert.rejects(
          store.transaction(async (tx) => {
            await store.acceptRequest(b, 'k3', tx);
            throw boom;
          }),
          (e) => e === boom,
        );
        assert.equal(await store.readIntent(b, 'k3'), null);
        assert.deepEqual(await domainRows('k2'), []);
        assert.deepEqual(
          (await store.listOwedRequests(b, 0, 10)).keys.map((k) => k.scopeId),
          ['k1'],
        );
      });

      test("raw backend handle: mark and request join the caller's transaction", async () => {
        const { store } = fx;
        const b = 'rawtx';
        await store.markDirty(b, 'exists');
        const before_ = await mustRead(store, b, 'exists');

        if (backend === 'sqlite') {
          const db = (store as SqliteStore).db;
          db.exec('BEGIN IMMEDIATE');
          try {
            await domainInsert(db, 'raw-new', 'raw');
            assert.equal((await store.markDirty(b, 'exists', db)).dirtyGeneration, before_.dirtyGeneration + 1);
            assert.equal((await store.acceptRequest(b, 'exists', db)).requestedGeneration, before_.requestedGeneration + 1);
            assert.equal((await store.markDirty(b, 'raw-new', db)).dirtyGeneration, 1);
          } finally {
            db.exec('ROLLBACK');
          }
          assert.deepEqual(gens(await store.readIntent(b, 'exists')), gens(before_));
          assert.equal(await store.readIntent(b, 'raw-new'), null);
          assert.deepEqual(await domainRows('raw-new'), []);

          // Commit path on the raw handle.
          db.exec('BEGIN IMMEDIATE');
          try {
            await store.markDirty(b, 'raw-commit', db);
            db.exec('COMMIT');
          } finally {
            if (db.inTransaction) db.exec('ROLLBACK');
          }
          assert.equal((await mustRead(store, b, 'raw-commit')).dirtyGeneration, 1);

          // A handle without an open transaction is refused, and nothing is written.
          assert.equal(db.inTransaction, false);
          await assert.rejects(store.markDirty(b, 'no-tx', db), /no open transaction/);
          await assert.rejects(store.acceptRequest(b, 'no-tx', db), /no open transaction/);
          assert.equal(await store.readIntent(b, 'no-tx'), null);
        } else {
          const conn = await (store as MysqlStore).pool.getConnection();
          try {
            await conn.query('START TRANSACTION');
            await domainInsert(conn, 'raw-new', 'raw');
            assert.equal((await store.markDirty(b, 'exists', conn)).dirtyGeneration, before_.dirtyGeneration + 1);
            assert.equal((await store.acceptRequest(b, 'exists', conn)).requestedGeneration, before_.requestedGeneration + 1);
            assert.equal((await store.markDirty(b, 'raw-new', conn)).dirtyGeneration, 1);
            assert.equal(await other.readIntent(b, 'raw-new'), null, 'uncommitted registration must not be visible to others');
            await conn.query('ROLLBACK');

            assert.deepEqual(gens(await store.readIntent(b, 'exists')), gens(before_));
            assert.equal(await store.readIntent(b, 'raw-new'), null);
            assert.deepEqual(await domainRows('raw-new'), []);

            await conn.query('START TRANSACTION');
            await store.markDirty(b, 'raw-commit', conn);
            await conn.query('COMMIT');
            assert.equal((await mustRead(store, b, 'raw-commit')).dirtyGeneration, 1);
          } finally {
            await conn.query('ROLLBACK').catch(() => undefined);
            conn.release();
          }
        }
      });

      test('listOwedRequests pages every owed key exactly once in pending_sequence order', async () => {
        const { store } = fx;
        const t = await takeTerm(store);
        const b = 'owed';
        const expected: string[] = [];
        let owedCount = 0;
        for (let i = 0; owedCount < 23; i++) {
          const id = `k${String(i).padStart(3, '0')}`;
          switch (i % 5) {
            case 0: // owed: one request
              await store.acceptRequest(b, id);
              expected.push(id);
              owedCount++;
              break;
            case 1: // not owed: dirty only
              await store.markDirty(b, id);
              break;
            case 2: {
              // owed: two requests, the first acknowledged
              await store.acceptRequest(b, id);
              await store.acceptRequest(b, id);
              await store.ackInvocation(t, { bindingName: b, scopeId: id, claimedRequestGeneration: 1 });
              expected.push(id);
              owedCount++;
              break;
            }
            case 3: {
              // not owed: request acknowledged (dirty stays)
              await store.markDirty(b, id);
              await store.acceptRequest(b, id);
              await store.ackInvocation(t, { bindingName: b, scopeId: id, claimedRequestGeneration: 1 });
              break;
            }
            case 4: // an owed key of another binding, interleaved
              await store.acceptRequest('owed-other', id);
              break;
          }
        }
        assert.equal(expected.length, 23);

        const seen: string[] = [];
        const sizes: number[] = [];
        let after_ = 0;
        for (let guard = 0; ; guard++) {
          assert.ok(guard < 20, 'paging did not end');
          const page = await store.listOwedRequests(b, after_, 5);
          assert.ok(page.keys.length <= 5, 'a page never exceeds its limit');
          let previous = after_;
          for (const k of page.keys) {
            assert.ok(k.pendingSequence > previous, 'keys ascend by pending_sequence, after the cursor');
            previous = k.pendingSequence;
            assert.ok(k.requestedGeneration > k.handledGeneration, `${k.scopeId} listed but not owed`);
            seen.push(k.scopeId);
          }
          sizes.push(page.keys.length);
          if (page.keys.length > 0) assert.equal(page.nextAfterSequence, page.keys[page.keys.length - 1].pendingSequence);
          if (page.exhausted) break;
          after_ = page.nextAfterSequence;
        }
        assert.deepEqual(seen, expected);
        assert.deepEqual(sizes, [5, 5, 5, 5, 3]);

        // Each listed key's generations are the stored ones.
        const one = (await store.listOwedRequests(b, 0, 1)).keys[0];
        const stored = await mustRead(store, b, one.scopeId);
        assert.deepEqual(
          [one.pendingSequence, one.requestedGeneration, one.handledGeneration, one.dirtyGeneration, one.cleanGeneration],
          [stored.pendingSequence, stored.requestedGeneration, stored.handledGeneration, stored.dirtyGeneration, stored.cleanGeneration],
        );
        const empty = await store.listOwedRequests('owed-none', 0, 5);
        assert.deepEqual(empty, { keys: [], nextAfterSequence: 0, exhausted: true });
      });

      test('acknowledge (pc_aps_acknowledge): ackInvocation in one call, in its own transaction; a lost term or a refused ack writes nothing', async () => {
        const { store } = fx;
        const t = await takeTerm(store);
        const b = 'ack-alone';
        for (let i = 0; i < 2; i++) await store.acceptRequest(b, 'k');
        await store.markDirty(b, 'k');
        const start = await mustRead(store, b, 'k');
        await rejectsWithCode(store.acknowledge(t, { bindingName: b, scopeId: 'k', claimedRequestGeneration: 3 }), 'ack_beyond_request');
        await assert.rejects(
          store.acknowledge({ ...t, supervisorGeneration: t.supervisorGeneration + 1 }, { bindingName: b, scopeId: 'k', claimedRequestGeneration: 1 }),
          TermLostError,
        );
        assert.deepEqual(gens(await store.readIntent(b, 'k')), gens(start), 'refused acknowledgements change nothing');
        const a = await store.acknowledge(t, { bindingName: b, scopeId: 'k', claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 1 });
        assert.deepEqual([a.outcome, a.requestedGeneration, a.handledGeneration, a.dirtyGeneration, a.cleanGeneration], ['acknowledged', 2, 1, 1, 1]);
        assert.deepEqual(
          gens(await other.readIntent(b, 'k')),
          gens({ ...start, handledGeneration: 1, cleanGeneration: 1 }),
          'committed: another connection sees it',
        );
        assert.equal((await store.acknowledge(t, { bindingName: b, scopeId: 'k', claimedRequestGeneration: 1 })).outcome, 'already_handled');
      });

      test('the raw acknowledgement refuses a claim below 1 and a negative clean confirmation, even when all else would let it write', async () => {
        const { store } = fx;
        const t = await takeTerm(store);
        const b = 'ack-raw';
        await store.acceptRequest(b, 'k');
        await store.markDirty(b, 'k');
        const start = await mustRead(store, b, 'k');
        const raw = (claimed: number, clean: number | null) =>
          (store as unknown as { callOperation(op: string, p: Record<string, unknown>): Promise<unknown> }).callOperation('pc_aps_acknowledge', {
            supervisor_key: t.supervisorKey,
            holder_id: t.holderId,
            supervisor_generation: t.supervisorGeneration,
            binding_name: b,
            scope_id: 'k',
            claimed_request_generation: claimed,
            clean_through_dirty_generation: clean,
          });
        await rejectsWithCode(raw(1, -1), 'invalid_argument');
        await rejectsWithCode(raw(0, null), 'invalid_argument');
        await rejectsWithCode(raw(-1, 1), 'invalid_argument');
        assert.deepEqual(gens(await other.readIntent(b, 'k')), gens(start), 'nothing written');
        await raw(1, 1);
        assert.deepEqual(gens(await other.readIntent(b, 'k')), gens({ ...start, handledGeneration: 1, cleanGeneration: 1 }));
      });

      test('ackInvocation: handled up to the claim, clean up to the snapshot, never beyond, never backwards', async () => {
        const { store } = fx;
        const t = await takeTerm(store);
        const b = 'ack';
        const s = 'k';
        for (let i = 0; i < 3; i++) await store.acceptRequest(b, s);
        for (let i = 0; i < 2; i++) await store.markDirty(b, s);
        const start = await mustRead(store, b, s); // requested 3, dirty 2
        assert.deepEqual([start.requestedGeneration, start.dirtyGeneration], [3, 2]);

        await rejectsWithCode(store.ackInvocation(t, { bindingName: b, scopeId: s, claimedRequestGeneration: 4 }), 'ack_beyond_request');
        await rejectsWithCode(
          store.ackInvocation(t, { bindingName: b, scopeId: s, claimedRequestGeneration: 4, cleanThroughDirtyGeneration: 1 }),
          'ack_beyond_request',
        );
        assert.deepEqual(gens(await store.readIntent(b, s)), gens(start), 'a refused ack changes nothing');

        const a1 = await store.ackInvocation(t, { bindingName: b, scopeId: s, claimedRequestGeneration: 2, cleanThroughDirtyGeneration: 1 });
        assert.deepEqual(
          [a1.outcome, a1.requestedGeneration, a1.handledGeneration, a1.dirtyGeneration, a1.cleanGeneration, a1.bindingName, a1.scopeId],
          ['acknowledged', 3, 2, 2, 1, b, s],
        );
        // Handled advanced to the claim only: the third request is still owed.
        assert.deepEqual(
          (await store.listOwedRequests(b, 0, 10)).keys.map((k) => [k.scopeId, k.handledGeneration]),
          [[s, 2]],
        );

        const older = await store.ackInvocation(t, { bindingName: b, scopeId: s, claimedRequestGeneration: 1 });
        assert.equal(older.outcome, 'already_handled');
        assert.equal(older.handledGeneration, 2);
        const same = await store.ackInvocation(t, { bindingName: b, scopeId: s, claimedRequestGeneration: 2 });
        assert.equal(same.outcome, 'already_handled');
        assert.equal((await mustRead(store, b, s)).handledGeneration, 2);

        const mid = await mustRead(store, b, s);
        await rejectsWithCode(
          store.ackInvocation(t, { bindingName: b, scopeId: s, claimedRequestGeneration: 3, cleanThroughDirtyGeneration: 3 }),
          'clean_beyond_dirty',
        );
        assert.deepEqual(gens(await store.readIntent(b, s)), gens(mid), 'a refused ack advances neither handled nor clean');

        // An older clean snapshot does not move clean backwards.
        const a2 = await store.ackInvocation(t, { bindingName: b, scopeId: s, claimedRequestGeneration: 3, cleanThroughDirtyGeneration: 0 });
        assert.deepEqual([a2.outcome, a2.handledGeneration, a2.cleanGeneration], ['acknowledged', 3, 1]);
        assert.deepEqual((await store.listOwedRequests(b, 0, 10)).keys, []);
        const stored = await mustRead(store, b, s);
        assert.deepEqual([stored.handledGeneration, stored.cleanGeneration, stored.requestedGeneration, stored.dirtyGeneration], [3, 1, 3, 2]);

        // Without a clean confirmation, clean stays (a partial success keeps dirty > clean).
        await store.acceptRequest(b, s);
        const a3 = await store.ackInvocation(t, { bindingName: b, scopeId: s, claimedRequestGeneration: 4 });
        assert.deepEqual([a3.outcome, a3.handledGeneration, a3.cleanGeneration], ['acknowledged', 4, 1]);
        // Clean up to the snapshot's dirty generation.
        await store.acceptRequest(b, s);
        const a4 = await store.ackInvocation(t, { bindingName: b, scopeId: s, claimedRequestGeneration: 5, cleanThroughDirtyGeneration: 2 });
        assert.deepEqual([a4.handledGeneration, a4.cleanGeneration, a4.dirtyGeneration], [5, 2, 2]);
        // A repeated ack of a handled generation changes handled no more, but its clean
        // confirmation still applies (header: 'already_handled' ... a clean confirmation is still applied).
        await store.markDirty(b, s);
        const a5 = await store.ackInvocation(t, { bindingName: b, scopeId: s, claimedRequestGeneration: 5, cleanThroughDirtyGeneration: 3 });
        assert.deepEqual([a5.outcome, a5.handledGeneration, a5.cleanGeneration, a5.dirtyGeneration], ['already_handled', 5, 3, 3]);
        assert.deepEqual([(await mustRead(store, b, s)).handledGeneration, (await mustRead(store, b, s)).cleanGeneration], [5, 3]);

        await rejectsWithCode(store.ackInvocation(t, { bindingName: b, scopeId: 'missing', claimedRequestGeneration: 1 }), 'intent_not_found');
        await rejectsWithCode(store.ackInvocation(t, { bindingName: 'ack-none', scopeId: s, claimedRequestGeneration: 1 }), 'intent_not_found');
        assert.equal(await store.readIntent(b, 'missing'), null, 'an ack never registers a key');
      });

      test('ackInvocation inside a business transaction that then fails leaves nothing', async () => {
        const { store } = fx;
        const t = await takeTerm(store);
        const b = 'ack-tx';
        await store.acceptRequest(b, 'k');
        await store.markDirty(b, 'k');
        const start = await mustRead(store, b, 'k');
        const boom = new Error('business commit failed');
        await assert.rejects(
          store.transaction(async (tx) => {
            await domainInsert(tx, 'ack-tx-k', 'result');
            const r = await store.ackInvocation(t, { bindingName: b, scopeId: 'k', claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 1 }, tx);
            assert.equal(r.outcome, 'acknowledged');
            throw boom;
          }),
          (e) => e === boom,
        );
        assert.deepEqual(gens(await store.readIntent(b, 'k')), gens(start));
        assert.deepEqual(await domainRows('ack-tx-k'), []);
        assert.deepEqual(
          (await store.listOwedRequests(b, 0, 10)).keys.map((k) => k.scopeId),
          ['k'],
        );

        // The same acknowledgement committed with its business write.
        await store.transaction(async (tx) => {
          await domainInsert(tx, 'ack-tx-k', 'result');
          await store.ackInvocation(t, { bindingName: b, scopeId: 'k', claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 1 }, tx);
        });
        const done = await mustRead(store, b, 'k');
        assert.deepEqual([done.handledGeneration, done.cleanGeneration], [1, 1]);
        assert.deepEqual(await domainRows('ack-tx-k'), ['result']);
      });

      test('A8: a request accepted while an invocation runs is not swallowed by its ack', async () => {
        const { store } = fx;
        const t = await takeTerm(store);
        const b = 'a8-req';
        // Requests while queued merge: the invocation carries the latest G.
        await store.acceptRequest(b, 'k');
        await store.acceptRequest(b, 'k');
        const snapshot = await mustRead(store, b, 'k'); // invocation starts with G
        const g = snapshot.requestedGeneration;
        assert.equal(g, 2);
        const during = await store.acceptRequest(b, 'k'); // G + 1 while it runs
        assert.equal(during.requestedGeneration, g + 1);
        const ack = await store.ackInvocation(t, { bindingName: b, scopeId: 'k', claimedRequestGeneration: g });
        assert.equal(ack.outcome, 'acknowledged');
        assert.deepEqual([ack.requestedGeneration, ack.handledGeneration], [g + 1, g]);
        const owed = await store.listOwedRequests(b, 0, 10);
        assert.deepEqual(
          owed.keys.map((k) => [k.scopeId, k.requestedGeneration, k.handledGeneration]),
          [['k', g + 1, g]],
        );
        // The successor invocation acknowledges G + 1; then nothing is owed.
        await store.ackInvocation(t, { bindingName: b, scopeId: 'k', claimedRequestGeneration: g + 1 });
        assert.deepEqual((await store.listOwedRequests(b, 0, 10)).keys, []);
      });

      test('A8: a dirty mark during an invocation survives its clean confirmation', async () => {
        const { store } = fx;
        const t = await takeTerm(store);
        const b = 'a8-dirty';
        await store.markDirty(b, 'k');
        await store.acceptRequest(b, 'k');
        const snapshot = await mustRead(store, b, 'k');
        const d = snapshot.dirtyGeneration;
        const marked = await store.markDirty(b, 'k'); // new input while the invocation runs
        assert.equal(marked.dirtyGeneration, d + 1);
        const ack = await store.ackInvocation(t, {
          bindingName: b,
          scopeId: 'k',
          claimedRequestGeneration: snapshot.requestedGeneration,
          cleanThroughDirtyGeneration: snapshot.dirtyGeneration,
        });
        assert.equal(ack.outcome, 'acknowledged');
        assert.deepEqual([ack.dirtyGeneration, ack.cleanGeneration], [d + 1, d]);
        const stored = await mustRead(store, b, 'k');
        assert.ok(stored.dirtyGeneration > stored.cleanGeneration, 'the mark made during the run keeps ordinary work');
        assert.deepEqual([stored.dirtyGeneration, stored.cleanGeneration], [d + 1, d]);
      });

      test('invariants hold in the table and CHECK constraints refuse violations', async () => {
        const { store } = fx;
        const t = await takeTerm(store);
        const b = 'inv';
        await store.markDirty(b, 'k');
        await store.markDirty(b, 'k');
        await store.acceptRequest(b, 'k');
        await store.ackInvocation(t, { bindingName: b, scopeId: 'k', claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 1 });
        const violating = await fx.query(
          `SELECT COUNT(*) AS n FROM pc_artifact_processing_intents
          WHERE NOT (clean_generation >= 0 AND clean_generation <= dirty_generation
                 AND handled_generation >= 0 AND handled_generation <= requested_generation)`,
        );
        assert.equal(Number(violating[0].n), 0);
        const start = await mustRead(store, b, 'k'); // dirty 2, clean 1, requested 1, handled 1

        const where = 'WHERE binding_name = ? AND scope_id = ?';
        const violations: Array<[string, string]> = [
          [`UPDATE pc_artifact_processing_intents SET clean_generation = dirty_generation + 1 ${where}`, 'ck_pc_api_clean'],
          [`UPDATE pc_artifact_processing_intents SET clean_generation = -1 ${where}`, 'ck_pc_api_clean'],
          [`UPDATE pc_artifact_processing_intents SET dirty_generation = 0 ${where}`, 'ck_pc_api_clean'],
          [`UPDATE pc_artifact_processing_intents SET handled_generation = requested_generation + 1 ${where}`, 'ck_pc_api_handled'],
          [`UPDATE pc_artifact_processing_intents SET handled_generation = -1, requested_generation = -1 ${where}`, 'ck_pc_api_handled'],
          [`UPDATE pc_artifact_processing_intents SET requested_generation = 0 ${where}`, 'ck_pc_api_handled'],
        ];
        for (const [sql, constraint] of violations) {
          await assert.rejects(fx.query(sql, [b, 'k']), new RegExp(constraint), `must be refused by ${constraint}: ${sql}`);
        }
        assert.deepEqual(gens(await store.readIntent(b, 'k')), gens(start));
      });
    });
  }
}
