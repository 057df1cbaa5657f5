// Contract tests of the supervisor terms (RFC section 8): acquisition, renewal, expiry by the
// database clock, invalidation, ABA protection by the generation, and the fencing of every
// fenced operation by (holder, generation). MySQL/OceanBase and SQLite have different
// acquisition semantics (election with lease expiry vs. unconditional takeover on every start);
// both fence old terms the same way. Races between two real MySQL connections are at the end;
// races between two SQLite processes live in fencing-processes.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InvalidArgumentError, TermLostError } from '../../../src/store/errors.ts';
import type { LeaseRead, Store, Term, TermResult } from '../../../src/store/types.ts';
import { MysqlStore } from '../../../src/store/mysql/mysql-store.ts';
import { createBackend, term, waitFor, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';
import { stillPending, waitForBlockedStatement } from '../../helpers/lock-wait.ts';

const LONG_TTL = 60_000;

/** assert.rejects validator: a TermLostError with code term_lost (raised by `operation` when given). */
function termLost(operation?: string) {
  return (error: unknown) => {
    assert.ok(error instanceof TermLostError, `expected TermLostError, got ${String(error)}`);
    assert.equal(error.code, 'term_lost');
    if (operation) assert.equal(error.operation, operation);
    return true;
  };
}

/** assert.rejects validator: an InvalidArgumentError raised by the TypeScript checks, before any SQL ran. */
function invalidBeforeSql(operation: string) {
  return (error: unknown) => {
    assert.ok(error instanceof InvalidArgumentError, `expected InvalidArgumentError, got ${String(error)}`);
    assert.equal(error.code, 'invalid_argument');
    assert.equal(error.operation, operation);
    // An InvalidArgumentError mapped from the database carries the driver error as cause.
    assert.equal(error.cause, undefined, 'the error must come from the argument checks, not from the database');
    return true;
  };
}

function asTerm(result: TermResult): Term {
  assert.ok(result.holderId, 'the term result has a holder');
  return term(result.supervisorKey, result.holderId, result.supervisorGeneration);
}

async function leaseRowCount(fx: BackendFixture, key: string): Promise<number> {
  const rows = await fx.query('SELECT COUNT(*) AS n FROM pc_artifact_processing_leases WHERE supervisor_key = ?', [key]);
  return Number(rows[0].n);
}

/** Polls the lease (a plain read, never blocked by row locks) until the database clock passed its expiry. */
async function waitUntilExpired(store: Store, key: string): Promise<LeaseRead> {
  const lease = await waitFor(
    async () => {
      const current = await store.readLease(key);
      return current.live ? null : current;
    },
    15_000,
    50,
  );
  assert.ok(lease);
  return lease;
}

/** Lease fields that only change when the term changes (no clock). */
async function leaseState(store: Store, key: string) {
  const { holderId, supervisorGeneration, expiresAt } = await store.readLease(key);
  return { holderId, supervisorGeneration, expiresAt: expiresAt?.getTime() ?? null };
}

// ---------------------------------------------------------------------------------------------
// Fenced operations with a stale and with the live term.
// ---------------------------------------------------------------------------------------------

const DIRTY_KEY = 'dirty-key';
const OWED_KEY = 'owed-key';

/**
 * Prepares a binding with a dirty key and an owed request, and starts a scan with a live term,
 * so that afterwards the only possible reason for a failing fenced operation is the term.
 */
async function startScanFixture(store: Store, live: Term, binding: string): Promise<number> {
  await store.markDirty(binding, DIRTY_KEY);
  await store.acceptRequest(binding, OWED_KEY);
  const scan = await store.beginScan(live, binding, { kind: 'interval', intervalSeconds: 3600 });
  assert.equal(scan.outcome, 'started');
  assert.equal(scan.scanInProgress, true);
  return scan.scanGeneration;
}

async function bindingSnapshot(store: Store, binding: string) {
  const state = await store.readBindingState(binding);
  const { dbNow: _ignored, ...rest } = state;
  return {
    state: rest,
    dirty: await store.readIntent(binding, DIRTY_KEY),
    owed: await store.readIntent(binding, OWED_KEY),
  };
}

/** Every fenced operation rejects `stale` with TermLostError and changes nothing. */
async function assertRejectedEverywhere(store: Store, stale: Term, binding: string, scanGeneration: number): Promise<void> {
  const prior = await bindingSnapshot(store, binding);
  const leaseBefore = await leaseState(store, stale.supervisorKey);

  // assertTerm first in the caller's transaction: the write behind it never runs.
  await assert.rejects(
    store.transaction(async (tx) => {
      await store.assertTerm(tx, stale);
      await store.markDirty(binding, DIRTY_KEY, tx);
    }),
    termLost('pc_aps_assert_term'),
  );

  // A business write first, then the acknowledgement in the same transaction: both roll back.
  await assert.rejects(
    store.transaction(async (tx) => {
      const business = await store.markDirty(binding, OWED_KEY, tx);
      assert.equal(business.dirtyGeneration, (prior.owed?.dirtyGeneration ?? 0) + 1);
      await store.ackInvocation(stale, { bindingName: binding, scopeId: OWED_KEY, claimedRequestGeneration: 1 }, tx);
    }),
    termLost('pc_aps_ack_invocation'),
  );

  // The acknowledgement on its own (the adapter wraps it in a transaction).
  await assert.rejects(
    store.ackInvocation(stale, { bindingName: binding, scopeId: OWED_KEY, claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 0 }),
    termLost('pc_aps_ack_invocation'),
  );

  await assert.rejects(store.beginScan(stale, binding, { kind: 'interval', intervalSeconds: 1 }), termLost('pc_aps_begin_scan'));
  await assert.rejects(store.admitScanPage(stale, binding, scanGeneration, 0, 100), termLost('pc_aps_admit_scan_page'));
  await assert.rejects(store.finishScan(stale, binding, scanGeneration), termLost('pc_aps_finish_scan'));
  await assert.rejects(store.renewTerm(stale, LONG_TTL), termLost('pc_aps_renew_term'));

  assert.deepEqual(await bindingSnapshot(store, binding), prior, 'a rejected fenced operation left a trace');
  assert.deepEqual(await leaseState(store, stale.supervisorKey), leaseBefore, 'a rejected operation changed the lease');
}

/** Every fenced operation works with the live term (the scan fixture is completed on the way). */
async function assertAcceptedEverywhere(store: Store, live: Term, binding: string, scanGeneration: number): Promise<void> {
  const prior = await bindingSnapshot(store, binding);
  assert.ok(prior.dirty && prior.owed);

  const resumed = await store.beginScan(live, binding, { kind: 'interval', intervalSeconds: 3600 });
  assert.equal(resumed.outcome, 'resumed');
  assert.equal(resumed.scanGeneration, scanGeneration);

  const page = await store.admitScanPage(live, binding, scanGeneration, 0, 100);
  assert.deepEqual(
    page.keys.map((k) => k.scopeId),
    [DIRTY_KEY],
  );
  assert.equal(page.keys[0].requestedGeneration, prior.dirty.requestedGeneration + 1);
  assert.equal((await store.finishScan(live, binding, scanGeneration)).outcome, 'finished');

  const ack = await store.transaction(async (tx) => {
    await store.markDirty(binding, OWED_KEY, tx);
    return store.ackInvocation(live, { bindingName: binding, scopeId: OWED_KEY, claimedRequestGeneration: 1 }, tx);
  });
  assert.equal(ack.outcome, 'acknowledged');
  assert.equal(ack.handledGeneration, 1);
  assert.equal(ack.dirtyGeneration, prior.owed.dirtyGeneration + 1);

  const marked = await store.transaction(async (tx) => {
    await store.assertTerm(tx, live);
    return store.markDirty(binding, DIRTY_KEY, tx);
  });
  assert.equal(marked.dirtyGeneration, prior.dirty.dirtyGeneration + 1);
  assert.equal((await store.readIntent(binding, DIRTY_KEY))?.dirtyGeneration, prior.dirty.dirtyGeneration + 1);

  const renewed = await store.renewTerm(live, LONG_TTL);
  assert.equal(renewed.supervisorGeneration, live.supervisorGeneration);
  assert.equal(renewed.holderId, live.holderId);
}

// ---------------------------------------------------------------------------------------------
// Both backends: invalidation, argument checks, basic fencing.
// ---------------------------------------------------------------------------------------------

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  {
    describe(`[${backend}] terms: invalidation, argument checks and fencing`, () => {
      let fx: BackendFixture;
      before(async () => {
        fx = await createBackend(backend);
      });
      after(async () => {
        await fx.cleanup();
      });

      test('readLease of a key without a row: generation 0, no holder, not live', async () => {
        const lease = await fx.store.readLease('artifact:never-used');
        assert.equal(lease.supervisorKey, 'artifact:never-used');
        assert.equal(lease.holderId, null);
        assert.equal(lease.supervisorGeneration, 0);
        assert.equal(lease.expiresAt, null);
        assert.equal(lease.live, false);
        assert.ok(lease.dbNow instanceof Date && !Number.isNaN(lease.dbNow.getTime()));
        assert.equal(await leaseRowCount(fx, 'artifact:never-used'), 0, 'readLease must not create a row');
      });

      test('unconditional invalidation: generation + 1, holder cleared, old term fenced out everywhere', async () => {
        const { store } = fx;
        const key = 'artifact:inval-any';
        const binding = 'inval-any';
        const acquired = await store.acquireTerm(key, 'holder-a', LONG_TTL);
        assert.equal(acquired.outcome, 'acquired');
        const old = asTerm(acquired);
        const scanGeneration = await startScanFixture(store, old, binding);

        const invalidated = await store.invalidateTerm(key);
        assert.equal(invalidated.outcome, 'invalidated');
        assert.equal(invalidated.supervisorKey, key);
        assert.equal(invalidated.holderId, null);
        assert.equal(invalidated.expiresAt, null);
        assert.equal(invalidated.supervisorGeneration, old.supervisorGeneration + 1);

        const lease = await store.readLease(key);
        assert.equal(lease.holderId, null);
        assert.equal(lease.live, false);
        assert.equal(lease.expiresAt, null);
        assert.equal(lease.supervisorGeneration, old.supervisorGeneration + 1);

        await assertRejectedEverywhere(store, old, binding, scanGeneration);
        // Claiming the new generation does not help: nobody holds it.
        await assert.rejects(
          store.transaction((tx) => store.assertTerm(tx, term(key, 'holder-a', invalidated.supervisorGeneration))),
          termLost('pc_aps_assert_term'),
        );

        // A new start takes a fresh generation and can finish the scan the old term left.
        const next = await store.acquireTerm(key, 'holder-a', LONG_TTL);
        assert.equal(next.outcome, 'acquired');
        assert.equal(next.supervisorGeneration, old.supervisorGeneration + 2);
        await assertAcceptedEverywhere(store, asTerm(next), binding, scanGeneration);
        await assertRejectedEverywhere(store, old, binding, scanGeneration);
      });

      test('expected invalidation: only the expected term is ended; a stale expectation changes nothing', async () => {
        const { store } = fx;
        const key = 'artifact:inval-expected';
        const acquired = await store.acquireTerm(key, 'holder-a', LONG_TTL);
        const live = asTerm(acquired);
        const prior = await leaseState(store, key);

        const stale = [
          { holderId: 'holder-b', supervisorGeneration: live.supervisorGeneration },
          { holderId: 'holder-a', supervisorGeneration: live.supervisorGeneration + 1 },
          { holderId: 'holder-a', supervisorGeneration: live.supervisorGeneration - 1 },
        ];
        for (const expected of stale) {
          await assert.rejects(store.invalidateTerm(key, expected), termLost('pc_aps_invalidate_term'));
          assert.deepEqual(await leaseState(store, key), prior, `invalidation expecting ${JSON.stringify(expected)} changed the lease`);
          assert.equal((await store.readLease(key)).live, true);
        }
        // The live term is untouched and still works.
        await store.transaction((tx) => store.assertTerm(tx, live));

        const invalidated = await store.invalidateTerm(key, { holderId: live.holderId, supervisorGeneration: live.supervisorGeneration });
        assert.equal(invalidated.outcome, 'invalidated');
        assert.equal(invalidated.holderId, null);
        assert.equal(invalidated.supervisorGeneration, live.supervisorGeneration + 1);
        await assert.rejects(
          store.transaction((tx) => store.assertTerm(tx, live)),
          termLost('pc_aps_assert_term'),
        );

        // The same shutdown repeated (its term is already ended) is itself stale.
        const afterInvalidation = await leaseState(store, key);
        await assert.rejects(
          store.invalidateTerm(key, { holderId: live.holderId, supervisorGeneration: live.supervisorGeneration }),
          termLost('pc_aps_invalidate_term'),
        );
        assert.deepEqual(await leaseState(store, key), afterInvalidation);
      });

      test('invalidating a key without a row creates it at generation 1; an expectation on it creates nothing', async () => {
        const { store } = fx;
        const expectedKey = 'artifact:inval-fresh-expected';
        await assert.rejects(store.invalidateTerm(expectedKey, { holderId: 'holder-a', supervisorGeneration: 0 }), termLost('pc_aps_invalidate_term'));
        assert.equal(await leaseRowCount(fx, expectedKey), 0, 'a rejected invalidation left a lease row');
        assert.equal((await store.readLease(expectedKey)).supervisorGeneration, 0);

        const key = 'artifact:inval-fresh';
        assert.equal(await leaseRowCount(fx, key), 0);
        const invalidated = await store.invalidateTerm(key);
        assert.equal(invalidated.outcome, 'invalidated');
        assert.equal(invalidated.supervisorGeneration, 1);
        assert.equal(invalidated.holderId, null);
        assert.equal(invalidated.expiresAt, null);
        assert.equal(await leaseRowCount(fx, key), 1);
        const lease = await store.readLease(key);
        assert.deepEqual([lease.holderId, lease.supervisorGeneration, lease.live], [null, 1, false]);

        // Invalidation keeps and advances the generation: the next start is generation 2.
        const acquired = await store.acquireTerm(key, 'holder-a', LONG_TTL);
        assert.equal(acquired.outcome, 'acquired');
        assert.equal(acquired.supervisorGeneration, 2);
      });

      test('assertTerm with a wrong holder or generation: TermLostError, and the transaction rolls back', async () => {
        const { store } = fx;
        const key = 'artifact:assert-wrong';
        const live = asTerm(await store.acquireTerm(key, 'holder-a', LONG_TTL));
        const wrong = [
          term(key, 'holder-b', live.supervisorGeneration),
          term(key, 'holder-a', live.supervisorGeneration + 1),
          term('artifact:assert-no-row', 'holder-a', 1),
        ];
        for (const t of wrong) {
          await assert.rejects(
            store.transaction(async (tx) => {
              await store.markDirty('assert-wrong', 'k', tx);
              await store.assertTerm(tx, t);
            }),
            termLost('pc_aps_assert_term'),
          );
          await assert.rejects(store.renewTerm(t, LONG_TTL), termLost('pc_aps_renew_term'));
        }
        assert.equal(await store.readIntent('assert-wrong', 'k'), null, 'the write before the failed assertion was committed');
        assert.equal(await leaseRowCount(fx, 'artifact:assert-no-row'), 0);

        const marked = await store.transaction(async (tx) => {
          await store.assertTerm(tx, live);
          return store.markDirty('assert-wrong', 'k', tx);
        });
        assert.equal(marked.dirtyGeneration, 1);
      });

      test('invalid arguments are rejected before any SQL runs', async () => {
        const { store } = fx;
        const badKey = 'artifact:Bad_Name';
        await assert.rejects(store.acquireTerm(badKey, 'holder-a', 10_000), invalidBeforeSql('pc_aps_acquire_term'));
        await assert.rejects(store.invalidateTerm(badKey), invalidBeforeSql('pc_aps_invalidate_term'));
        await assert.rejects(store.readLease(badKey), invalidBeforeSql('pc_aps_read_lease'));
        await assert.rejects(store.renewTerm(term(badKey, 'holder-a', 1), 10_000), invalidBeforeSql('pc_aps_renew_term'));
        for (const key of ['Global', '', 'artifact:', 'artifact:-x', 'dedicated:foo']) {
          await assert.rejects(store.acquireTerm(key, 'holder-a', 10_000), invalidBeforeSql('pc_aps_acquire_term'));
        }
        assert.equal(await leaseRowCount(fx, badKey), 0);

        // ttl out of range: SQLite's script ignores the ttl, so only the argument check stands here.
        const key = 'artifact:ttl-check';
        for (const ttl of [10, 999, 3_600_001, 1500.5, Number.NaN]) {
          await assert.rejects(store.acquireTerm(key, 'holder-a', ttl), invalidBeforeSql('pc_aps_acquire_term'));
        }
        assert.equal(await leaseRowCount(fx, key), 0, 'an acquisition with an invalid ttl reached the database');

        for (const holder of ['', 'bad holder', 'x'.repeat(129), 'comma,holder']) {
          await assert.rejects(store.acquireTerm(key, holder, 10_000), invalidBeforeSql('pc_aps_acquire_term'));
        }
        assert.equal(await leaseRowCount(fx, key), 0);

        const live = asTerm(await store.acquireTerm(key, 'holder-a', LONG_TTL));
        const prior = await leaseState(store, key);
        await assert.rejects(store.renewTerm(live, 10), invalidBeforeSql('pc_aps_renew_term'));
        await assert.rejects(store.renewTerm({ ...live, supervisorGeneration: 0 }, LONG_TTL), invalidBeforeSql('pc_aps_renew_term'));
        await assert.rejects(store.invalidateTerm(key, { holderId: live.holderId, supervisorGeneration: -1 }), invalidBeforeSql('pc_aps_invalidate_term'));
        await assert.rejects(
          store.invalidateTerm(key, { holderId: 'bad holder', supervisorGeneration: live.supervisorGeneration }),
          invalidBeforeSql('pc_aps_invalidate_term'),
        );
        await assert.rejects(
          store.transaction((tx) => store.assertTerm(tx, { ...live, supervisorGeneration: 1.5 })),
          invalidBeforeSql('pc_aps_assert_term'),
        );
        assert.deepEqual(await leaseState(store, key), prior, 'a rejected call changed the lease');
      });
    });
  }

  // ---------------------------------------------------------------------------------------------
  // MySQL / OceanBase: election, renewal, expiry by the database clock, ABA.
  // ---------------------------------------------------------------------------------------------

  if (backend === 'mysql')
    describe('[mysql] terms: election, renewal and expiry by the database clock', () => {
      let fx: BackendFixture;
      before(async () => {
        fx = await createBackend('mysql');
      });
      after(async () => {
        await fx.cleanup();
      });

      test('free key: acquired at generation 1; another holder is standby; the live holder again is renewed', async () => {
        const { store } = fx;
        const key = 'artifact:elect';
        const a = await store.acquireTerm(key, 'holder-a', 20_000);
        assert.equal(a.outcome, 'acquired');
        assert.equal(a.supervisorKey, key);
        assert.equal(a.holderId, 'holder-a');
        assert.equal(a.supervisorGeneration, 1);
        assert.ok(a.expiresAt);
        assert.equal(a.expiresAt.getTime() - a.dbNow.getTime(), 20_000, 'expires_at = database now + ttl');

        const b = await store.acquireTerm(key, 'holder-b', 20_000);
        assert.equal(b.outcome, 'standby');
        assert.equal(b.holderId, 'holder-a', 'standby reports the live holder');
        assert.equal(b.supervisorGeneration, 1);
        assert.equal(b.expiresAt?.getTime(), a.expiresAt.getTime(), 'standby reports the live expiry and does not extend it');

        const again = await store.acquireTerm(key, 'holder-a', 30_000);
        assert.equal(again.outcome, 'renewed');
        assert.equal(again.holderId, 'holder-a');
        assert.equal(again.supervisorGeneration, 1, 'the live holder calling acquire keeps its generation');
        assert.ok(again.expiresAt);
        assert.equal(again.expiresAt.getTime() - again.dbNow.getTime(), 30_000);
        assert.ok(again.expiresAt.getTime() > a.expiresAt.getTime());

        const lease = await store.readLease(key);
        assert.equal(lease.holderId, 'holder-a');
        assert.equal(lease.supervisorGeneration, 1);
        assert.equal(lease.live, true);
        assert.equal(lease.expiresAt?.getTime(), again.expiresAt.getTime());
        assert.ok(lease.dbNow.getTime() < lease.expiresAt.getTime());
      });

      test('renewTerm by the live holder keeps the generation and moves expires_at forward from the database clock', async () => {
        const { store } = fx;
        const key = 'artifact:renew';
        const a = await store.acquireTerm(key, 'holder-a', 10_000);
        const live = asTerm(a);
        const r1 = await store.renewTerm(live, 20_000);
        assert.equal(r1.outcome, 'renewed');
        assert.equal(r1.holderId, 'holder-a');
        assert.equal(r1.supervisorGeneration, 1);
        assert.ok(r1.expiresAt && a.expiresAt);
        assert.equal(r1.expiresAt.getTime() - r1.dbNow.getTime(), 20_000);
        assert.ok(r1.dbNow.getTime() >= a.dbNow.getTime());
        assert.ok(r1.expiresAt.getTime() > a.expiresAt.getTime());
        const lease = await store.readLease(key);
        assert.equal(lease.expiresAt?.getTime(), r1.expiresAt.getTime());
        assert.equal(lease.supervisorGeneration, 1);

        // Wrong holder or generation: lost, and the lease is not extended.
        const prior = await leaseState(store, key);
        for (const t of [term(key, 'holder-b', 1), term(key, 'holder-a', 2)]) {
          await assert.rejects(store.renewTerm(t, 60_000), termLost('pc_aps_renew_term'));
          await assert.rejects(
            store.transaction((tx) => store.assertTerm(tx, t)),
            termLost('pc_aps_assert_term'),
          );
        }
        assert.deepEqual(await leaseState(store, key), prior);

        // A shorter ttl is taken as given (expiry = now + ttl), the generation still unchanged.
        const r2 = await store.renewTerm(live, 5_000);
        assert.equal(r2.supervisorGeneration, 1);
        assert.equal(r2.expiresAt!.getTime() - r2.dbNow.getTime(), 5_000);
      });

      test('expiry by the database clock: the expired term is lost, not renewable, and another holder takes generation 2', async () => {
        const { store } = fx;
        const key = 'artifact:expiry';
        const a = await store.acquireTerm(key, 'holder-a', 1000);
        assert.equal(a.outcome, 'acquired');
        const old = asTerm(a);
        const live = await store.readLease(key);
        assert.equal(live.live, true);
        assert.ok(live.dbNow.getTime() < live.expiresAt!.getTime());

        const expired = await waitUntilExpired(store, key);
        assert.equal(expired.holderId, 'holder-a', 'expiry does not clear the holder');
        assert.equal(expired.supervisorGeneration, 1);
        assert.ok(expired.dbNow.getTime() >= expired.expiresAt!.getTime(), 'not live means the database clock passed expires_at');

        const prior = await leaseState(store, key);
        await assert.rejects(store.renewTerm(old, 10_000), termLost('pc_aps_renew_term'));
        await assert.rejects(
          store.transaction((tx) => store.assertTerm(tx, old)),
          termLost('pc_aps_assert_term'),
        );
        assert.deepEqual(await leaseState(store, key), prior, 'a failed renewal must not resurrect the expired term');
        assert.equal((await store.readLease(key)).live, false);

        const b = await store.acquireTerm(key, 'holder-b', LONG_TTL);
        assert.equal(b.outcome, 'acquired');
        assert.equal(b.holderId, 'holder-b');
        assert.equal(b.supervisorGeneration, 2);
        const standby = await store.acquireTerm(key, 'holder-a', LONG_TTL);
        assert.equal(standby.outcome, 'standby');
        assert.equal(standby.holderId, 'holder-b');
        assert.equal(standby.supervisorGeneration, 2);
        await assert.rejects(store.renewTerm(old, 10_000), termLost('pc_aps_renew_term'));
      });

      test('the same holder re-acquiring after its own expiry gets a new generation, not a renewal', async () => {
        const { store } = fx;
        const key = 'artifact:reacquire';
        const old = asTerm(await store.acquireTerm(key, 'holder-a', 1000));
        await waitUntilExpired(store, key);
        const again = await store.acquireTerm(key, 'holder-a', LONG_TTL);
        assert.equal(again.outcome, 'acquired');
        assert.equal(again.holderId, 'holder-a');
        assert.equal(again.supervisorGeneration, old.supervisorGeneration + 1);
        await assert.rejects(
          store.transaction((tx) => store.assertTerm(tx, old)),
          termLost('pc_aps_assert_term'),
        );
        await assert.rejects(store.renewTerm(old, LONG_TTL), termLost('pc_aps_renew_term'));
        await store.transaction((tx) => store.assertTerm(tx, asTerm(again)));
      });

      test('ABA: A (gen 1) expires, B (gen 2) expires, A again gets gen 3; gens 1 and 2 are fenced out everywhere', async () => {
        const { store } = fx;
        const key = 'artifact:aba';
        const binding = 'aba-binding';
        const a1 = await store.acquireTerm(key, 'holder-a', 1000);
        assert.deepEqual([a1.outcome, a1.supervisorGeneration], ['acquired', 1]);
        const termA1 = asTerm(a1);
        // A starts a scan while it is live; the takeovers below must be able to resume it.
        const scanGeneration = await startScanFixture(store, termA1, binding);
        await waitUntilExpired(store, key);

        const b2 = await store.acquireTerm(key, 'holder-b', 1000);
        assert.deepEqual([b2.outcome, b2.holderId, b2.supervisorGeneration], ['acquired', 'holder-b', 2]);
        const termB2 = asTerm(b2);
        await waitUntilExpired(store, key);

        const a3 = await store.acquireTerm(key, 'holder-a', LONG_TTL);
        assert.deepEqual([a3.outcome, a3.holderId, a3.supervisorGeneration], ['acquired', 'holder-a', 3]);
        const termA3 = asTerm(a3);

        await assertRejectedEverywhere(store, termA1, binding, scanGeneration);
        await assertRejectedEverywhere(store, termB2, binding, scanGeneration);
        await assert.rejects(store.invalidateTerm(key, { holderId: 'holder-a', supervisorGeneration: 1 }), termLost('pc_aps_invalidate_term'));
        await assertAcceptedEverywhere(store, termA3, binding, scanGeneration);
        // Still fenced after the live term's writes.
        await assertRejectedEverywhere(store, termA1, binding, scanGeneration);
        const final = await store.readLease(key);
        assert.deepEqual([final.holderId, final.supervisorGeneration, final.live], ['holder-a', 3, true]);
      });
    });

  // ---------------------------------------------------------------------------------------------
  // SQLite: every start takes the term unconditionally.
  // ---------------------------------------------------------------------------------------------

  if (backend === 'sqlite')
    describe('[sqlite] terms: every acquisition takes the term unconditionally', () => {
      let fx: BackendFixture;
      before(async () => {
        fx = await createBackend('sqlite');
      });
      after(async () => {
        await fx.cleanup();
      });

      test('each acquireTerm increments the generation, also for the same holder; expires_at is NULL', async () => {
        const { store } = fx;
        const key = 'artifact:sqlite-takeover';
        const expected: Array<[string, number]> = [
          ['holder-a', 1],
          ['holder-a', 2],
          ['holder-b', 3],
          ['holder-a', 4],
        ];
        for (const [holder, generation] of expected) {
          const r = await store.acquireTerm(key, holder, 10_000);
          assert.equal(r.outcome, 'acquired', 'SQLite never reports standby or renewed');
          assert.equal(r.holderId, holder);
          assert.equal(r.supervisorGeneration, generation);
          assert.equal(r.expiresAt, null);
          const lease = await store.readLease(key);
          assert.deepEqual([lease.holderId, lease.supervisorGeneration, lease.expiresAt, lease.live], [holder, generation, null, true]);
        }
      });

      test('renewTerm confirms the live term (generation unchanged, no expiry); a wrong term is lost', async () => {
        const { store } = fx;
        const key = 'artifact:sqlite-renew';
        const live = asTerm(await store.acquireTerm(key, 'holder-a', 10_000));
        const r = await store.renewTerm(live, 20_000);
        assert.equal(r.outcome, 'renewed');
        assert.equal(r.holderId, 'holder-a');
        assert.equal(r.supervisorGeneration, live.supervisorGeneration);
        assert.equal(r.expiresAt, null);
        const prior = await leaseState(store, key);
        for (const t of [term(key, 'holder-b', live.supervisorGeneration), term(key, 'holder-a', live.supervisorGeneration + 1)]) {
          await assert.rejects(store.renewTerm(t, 10_000), termLost('pc_aps_renew_term'));
          await assert.rejects(
            store.transaction((tx) => store.assertTerm(tx, t)),
            termLost('pc_aps_assert_term'),
          );
        }
        assert.deepEqual(await leaseState(store, key), prior);
      });

      test('a restart of the same holder fences out its own previous term everywhere', async () => {
        const { store } = fx;
        const key = 'artifact:sqlite-restart';
        const binding = 'sqlite-restart';
        const first = asTerm(await store.acquireTerm(key, 'holder-a', 10_000));
        const scanGeneration = await startScanFixture(store, first, binding);

        const second = await store.acquireTerm(key, 'holder-a', 10_000);
        assert.equal(second.outcome, 'acquired');
        assert.equal(second.supervisorGeneration, first.supervisorGeneration + 1);
        await assertRejectedEverywhere(store, first, binding, scanGeneration);
        await assertAcceptedEverywhere(store, asTerm(second), binding, scanGeneration);

        const third = await store.acquireTerm(key, 'holder-b', 10_000);
        assert.equal(third.supervisorGeneration, first.supervisorGeneration + 2);
        await assertRejectedEverywhere(store, asTerm(second), binding, scanGeneration);
        await assertRejectedEverywhere(store, first, binding, scanGeneration);
      });

      test('two stores in one process take the term one after the other (better-sqlite3 is synchronous: not a race; the race is in fencing-processes.test.ts): distinct generations, the later one wins', async () => {
        const store1 = fx.store;
        const store2 = fx.openStore();
        const key = 'artifact:sqlite-two-conns';
        let last = 0;
        for (let round = 0; round < 10; round++) {
          const [a, b] = await Promise.all([store1.acquireTerm(key, 'holder-a', 10_000), store2.acquireTerm(key, 'holder-b', 10_000)]);
          assert.equal(a.outcome, 'acquired');
          assert.equal(b.outcome, 'acquired');
          assert.deepEqual(
            [a.supervisorGeneration, b.supervisorGeneration].sort((x, y) => x - y),
            [last + 1, last + 2],
          );
          const winner = a.supervisorGeneration > b.supervisorGeneration ? a : b;
          const loser = winner === a ? b : a;
          const lease = await store1.readLease(key);
          assert.equal(lease.holderId, winner.holderId);
          assert.equal(lease.supervisorGeneration, winner.supervisorGeneration);
          await assert.rejects(
            store2.transaction((tx) => store2.assertTerm(tx, asTerm(loser))),
            termLost('pc_aps_assert_term'),
          );
          await store2.transaction((tx) => store2.assertTerm(tx, asTerm(winner)));
          last = winner.supervisorGeneration;
        }
      });
    });

  // ---------------------------------------------------------------------------------------------
  // MySQL: races between two real connections (two pools).
  // ---------------------------------------------------------------------------------------------

  if (backend === 'mysql')
    describe('[mysql] terms: races between two connections', () => {
      let fx: BackendFixture;
      let store1: Store;
      let store2: Store;
      before(async () => {
        fx = await createBackend('mysql');
        store1 = fx.store;
        store2 = fx.openStore();
      });
      after(async () => {
        await fx.cleanup();
      });

      function checkRace(a: TermResult, b: TermResult, expectedGeneration: number): TermResult {
        const outcomes = [a.outcome, b.outcome].sort();
        assert.deepEqual(outcomes, ['acquired', 'standby'], `exactly one winner, got ${a.outcome}/${b.outcome}`);
        const winner = a.outcome === 'acquired' ? a : b;
        const loser = winner === a ? b : a;
        assert.equal(winner.supervisorGeneration, expectedGeneration);
        assert.equal(loser.holderId, winner.holderId, 'standby reports the winner');
        assert.equal(loser.supervisorGeneration, winner.supervisorGeneration);
        assert.equal(loser.expiresAt?.getTime(), winner.expiresAt?.getTime());
        return winner;
      }

      test('20 rounds of invalidate + simultaneous acquire: exactly one acquired, one standby; generations strictly increase', async () => {
        const key = 'artifact:race';
        let previous = 0;
        const winners = new Set<string>();
        for (let round = 0; round < 20; round++) {
          const inv = await store1.invalidateTerm(key);
          assert.ok(inv.supervisorGeneration > previous);
          const [a, b] = await Promise.all([store1.acquireTerm(key, 'holder-a', LONG_TTL), store2.acquireTerm(key, 'holder-b', LONG_TTL)]);
          const winner = checkRace(a, b, inv.supervisorGeneration + 1);
          assert.ok(winner.supervisorGeneration > previous, 'generations strictly increase across rounds');
          previous = winner.supervisorGeneration;
          winners.add(winner.holderId!);
          const lease = await store2.readLease(key);
          assert.deepEqual([lease.holderId, lease.supervisorGeneration, lease.live], [winner.holderId, winner.supervisorGeneration, true]);
          // Only the winner's term passes the fence.
          const loserId = winner.holderId === 'holder-a' ? 'holder-b' : 'holder-a';
          await assert.rejects(
            store1.transaction((tx) => store1.assertTerm(tx, term(key, loserId, previous))),
            termLost('pc_aps_assert_term'),
          );
          await store2.transaction((tx) => store2.assertTerm(tx, asTerm(winner)));
        }
        assert.equal(previous, 40, 'each round: one invalidation and one acquisition');
      });

      test('20 fresh keys acquired simultaneously: the row is created once, one acquired at generation 1, one standby', async () => {
        for (let round = 0; round < 20; round++) {
          const key = `artifact:race-fresh-${round}`;
          const [a, b] = await Promise.all([store1.acquireTerm(key, 'holder-a', LONG_TTL), store2.acquireTerm(key, 'holder-b', LONG_TTL)]);
          checkRace(a, b, 1);
          assert.equal(await leaseRowCount(fx, key), 1);
        }
      });

      test('a takeover waits for the lease row lock of a fenced write transaction, then wins; the old term is fenced out', async () => {
        const key = 'artifact:race-fence';
        const binding = 'race-fence';
        const a = await store1.acquireTerm(key, 'holder-a', 1500);
        assert.equal(a.outcome, 'acquired');
        const termA = asTerm(a);

        let written!: (dirty: number) => void;
        const writtenP = new Promise<number>((r) => {
          written = r;
        });
        let release!: () => void;
        const releaseP = new Promise<void>((r) => {
          release = r;
        });
        let committed = false;
        const txP = store1
          .transaction(async (tx) => {
            await store1.assertTerm(tx, termA);
            const marked = await store1.markDirty(binding, 'k', tx);
            written(marked.dirtyGeneration);
            await releaseP;
          })
          .then(() => {
            committed = true;
          });
        txP.catch(() => undefined);

        assert.equal(await writtenP, 1);
        // The lease expires by the database clock while A's transaction still holds the lease row lock.
        // Plain reads are not blocked by that lock.
        await waitUntilExpired(store2, key);

        let takeoverDone = false;
        const takeoverP = store2.acquireTerm(key, 'holder-b', LONG_TTL).finally(() => {
          takeoverDone = true;
        });
        takeoverP.catch(() => undefined);

        // Positive evidence that the takeover is blocked (test/helpers/lock-wait.ts), not a pause.
        const database = (fx.target as { database: string }).database;
        await waitForBlockedStatement(fx, { infoPrefix: 'INSERT INTO pc_artifact_processing_lease_fences' }).catch(async (error: Error) => {
          // Neither seen in 10 s: say what the takeover and the sessions were doing.
          const outcome = await Promise.race([
            takeoverP.then(
              (t) => `resolved ${t.outcome}`,
              (e: Error) => `rejected: ${e.message}`,
            ),
            new Promise<string>((r) => setTimeout(() => r('pending'), 50)),
          ]);
          const sessions = await fx.query(
            `SELECT p.ID, p.COMMAND, p.STATE, p.TIME, LEFT(p.INFO, 80) AS info, t.trx_state FROM information_schema.PROCESSLIST p
               LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID WHERE p.DB = ?`,
            [database],
          );
          throw new Error(`${error.message}; takeover ${outcome}; A committed: ${committed}; sessions: ${JSON.stringify(sessions)}`);
        });
        // And the takeover has not resolved while A's transaction is open.
        assert.equal(await stillPending(takeoverP), true, 'the takeover must wait for the fenced transaction to end');
        assert.equal(takeoverDone, false);
        const during = await store2.readLease(key);
        assert.deepEqual([during.holderId, during.supervisorGeneration], ['holder-a', 1], 'no takeover committed in between');
        assert.equal(await store2.readIntent(binding, 'k'), null, "A's uncommitted write is not visible");

        release();
        await txP;
        assert.equal(committed, true);
        const b = await takeoverP;
        assert.equal(b.outcome, 'acquired');
        assert.equal(b.holderId, 'holder-b');
        assert.equal(b.supervisorGeneration, 2);

        // The write fenced before the takeover is committed; A's next fenced write is rejected.
        assert.equal((await store2.readIntent(binding, 'k'))?.dirtyGeneration, 1);
        await assert.rejects(
          store1.transaction(async (tx) => {
            await store1.assertTerm(tx, termA);
            await store1.markDirty(binding, 'k', tx);
          }),
          termLost('pc_aps_assert_term'),
        );
        await assert.rejects(
          store1.transaction(async (tx) => {
            await store1.markDirty(binding, 'k', tx);
            await store1.ackInvocation(termA, { bindingName: binding, scopeId: 'k', claimedRequestGeneration: 1 }, tx);
          }),
          termLost('pc_aps_ack_invocation'),
        );
        assert.equal((await store2.readIntent(binding, 'k'))?.dirtyGeneration, 1, 'a rejected fenced write left a trace');
        await store2.transaction(async (tx) => {
          await store2.assertTerm(tx, asTerm(b));
          await store2.markDirty(binding, 'k', tx);
        });
        assert.equal((await store1.readIntent(binding, 'k'))?.dirtyGeneration, 2);
      });

      test('two candidates race for an EXPIRED lease (failover): exactly one takes it at generation + 1, also when the expired holder is one of them', async () => {
        const key = 'artifact:race-expired';
        let generation = 0;
        for (let round = 0; round < 3; round++) {
          const held = await store1.acquireTerm(key, 'holder-a', 1000);
          assert.equal(held.outcome, 'acquired');
          generation = held.supervisorGeneration;
          await waitUntilExpired(store2, key);
          const [a, b] = await Promise.all([store1.acquireTerm(key, 'holder-a', LONG_TTL), store2.acquireTerm(key, 'holder-b', LONG_TTL)]);
          const winner = checkRace(a, b, generation + 1);
          const lease = await store2.readLease(key);
          assert.deepEqual([lease.holderId, lease.supervisorGeneration, lease.live], [winner.holderId, generation + 1, true]);
          // The expired term is fenced out even when its holder won again (no ABA).
          await assert.rejects(
            store1.transaction((tx) => store1.assertTerm(tx, asTerm(held))),
            termLost('pc_aps_assert_term'),
          );
          await store1.invalidateTerm(key);
        }
      });

      test('a renewal racing a takeover at expiry gets term_lost (lease row locked first, like acquire), never a deadlock', async () => {
        const key = 'artifact:race-renew';
        const { host, port, user, password, database } = fx.target as Extract<BackendFixture['target'], { backend: 'mysql' }>;
        // One connection per store, so each operation runs on a connection whose id we know.
        const taker = MysqlStore.open({ host, port, user, password, database }, 1);
        const renewer = MysqlStore.open({ host, port, user, password, database }, 1);
        const blocker = await (store1 as MysqlStore).pool.getConnection();
        try {
          const connectionId = async (s: MysqlStore) => Number((await s.domainQuery('SELECT CONNECTION_ID() AS id'))[0].id);
          const takerId = await connectionId(taker);
          const renewerId = await connectionId(renewer);
          // Waiting on the lease row held by the blocker: the connection's current statement (inside
          // the procedure) reads or writes the lease table. (MariaDB reports a PK lookup that waits in
          // the optimizer as state 'Statistics', not always as an INNODB_TRX lock wait.)
          const blockedOnLease = async (id: number) => {
            const rows = await fx.query("SELECT INFO AS info FROM information_schema.PROCESSLIST WHERE ID = ? AND COMMAND = 'Query'", [id]);
            return rows.length === 1 && /pc_artifact_processing_leases/.test(String(rows[0].info)) && !/^\s*CALL/i.test(String(rows[0].info));
          };
          const held = await store1.acquireTerm(key, 'holder-a', 4000);
          assert.equal(held.outcome, 'acquired');
          // A third transaction holds the lease row, so the takeover and the renewal queue on it while
          // the term is still live: the takeover first, then the renewal (which, in the old order,
          // had already passed its fence check and held its fence slot).
          await blocker.query('START TRANSACTION');
          await blocker.query('SELECT supervisor_generation FROM pc_artifact_processing_leases WHERE supervisor_key = ? FOR UPDATE', [key]);
          const takeoverP = taker.acquireTerm(key, 'holder-b', LONG_TTL);
          takeoverP.catch(() => undefined);
          await waitFor(() => blockedOnLease(takerId), 10_000, 10);
          const renewalP = renewer.renewTerm(asTerm(held), LONG_TTL);
          renewalP.catch(() => undefined);
          await waitFor(() => blockedOnLease(renewerId), 10_000, 10);
          // The lease expires by the database clock while both wait; then the row is released.
          await waitUntilExpired(store2, key);
          await blocker.query('COMMIT');

          const renewal = await renewalP.then(
            () => 'renewed',
            (e: unknown) => e,
          );
          assert.ok(
            renewal instanceof TermLostError,
            `the renewal must raise TermLostError, got ${String(renewal)} (${(renewal as { code?: string }).code ?? ''})`,
          );
          assert.equal(renewal.operation, 'pc_aps_renew_term');
          const takeover = await takeoverP;
          assert.deepEqual([takeover.outcome, takeover.holderId, takeover.supervisorGeneration], ['acquired', 'holder-b', held.supervisorGeneration + 1]);
          const lease = await store2.readLease(key);
          assert.deepEqual([lease.holderId, lease.supervisorGeneration, lease.live], ['holder-b', held.supervisorGeneration + 1, true]);
          await store2.transaction((tx) => store2.assertTerm(tx, asTerm(takeover)));
        } finally {
          await blocker.query('ROLLBACK').catch(() => undefined);
          blocker.release();
          await taker.close();
          await renewer.close();
        }
      });

      test('a candidate facing a live term gets standby at once, even while a fenced write holds its fence slot', async () => {
        const key = 'artifact:race-live';
        const a = await store1.acquireTerm(key, 'holder-a', LONG_TTL);
        const termA = asTerm(a);
        let held!: () => void;
        const heldP = new Promise<void>((r) => {
          held = r;
        });
        let release!: () => void;
        const releaseP = new Promise<void>((r) => {
          release = r;
        });
        const txP = store1.transaction(async (tx) => {
          await store1.assertTerm(tx, termA);
          await store1.markDirty('race-live', 'k', tx);
          held();
          await releaseP;
        });
        txP.catch(() => undefined);
        await heldP;
        // The fenced write locks only its fence slot (migration 0007): a standby decision changes no
        // term and does not wait for it. (A takeover of an expired lease does wait: see the test above.)
        const b = await store2.acquireTerm(key, 'holder-b', LONG_TTL);
        release();
        await txP;
        assert.equal(b.outcome, 'standby');
        assert.equal(b.holderId, 'holder-a');
        assert.equal(b.supervisorGeneration, 1);
        await store1.transaction((tx) => store1.assertTerm(tx, termA));
      });
    });
}
