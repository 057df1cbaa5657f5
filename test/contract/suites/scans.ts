// Contract of the automatic scan operations (RFC section 4, acceptance item 6): beginScan with
// interval / cron / off policies, admitScanPage, finishScan, on both backends.
//   * when a scan is due, what it records (generation, checkpoint, upper bound), resumption;
//   * set-based admission: limit, order, dirty > clean only, request reuse, exclusions, marks;
//   * crash recovery (A6): a resumed scan re-run from the first page admits nothing twice;
//   * the upper bound keeps a scan finite while new keys keep arriving;
//   * finishScan is idempotent and independent of workers.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { IntentSnapshot, KeyGenerations, KeyPage, ScanStart, Store, Term } from '../../../src/store/types.ts';
import { MysqlStore } from '../../../src/store/mysql/mysql-store.ts';
import { createBackend, waitFor, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';
import { takeTerm, rejectsWithCode } from '../../helpers/store-asserts.ts';

/** No test here relies on expiry, and a loaded machine took over 30 s for the 1,000-key cases. */
const LONG_TTL_MS = 600_000;

async function mustRead(store: Store, binding: string, scope: string): Promise<IntentSnapshot> {
  const intent = await store.readIntent(binding, scope);
  assert.ok(intent, `intent ${binding}/${scope} should exist`);
  return intent;
}

function ms(date: Date | null): number {
  assert.ok(date, 'expected a time, got null');
  return date.getTime();
}

/** Checks one page against its cursor and limit: ascending, after the cursor, within the limit. */
function checkPage(page: KeyPage, afterSequence: number, limit: number): void {
  assert.ok(page.keys.length <= limit, `page of ${page.keys.length} keys exceeds limit ${limit}`);
  let previous = afterSequence;
  for (const k of page.keys) {
    assert.ok(k.pendingSequence > previous, `keys must ascend after the cursor (${k.pendingSequence} after ${previous})`);
    previous = k.pendingSequence;
  }
  assert.equal(page.nextAfterSequence, previous);
  assert.equal(page.exhausted, page.keys.length < limit);
}

/** Admits pages from afterSequence until a short page; optional hook between pages. */
async function admitAll(
  store: Store,
  t: Term,
  binding: string,
  generation: number,
  limit: number,
  options: { after?: number; exclude?: string[]; between?: (pageIndex: number, page: KeyPage) => Promise<void> } = {},
): Promise<{ pages: KeyPage[]; keys: KeyGenerations[] }> {
  const pages: KeyPage[] = [];
  let cursor = options.after ?? 0;
  for (let guard = 0; ; guard++) {
    assert.ok(guard < 100, 'scan paging did not end');
    const page = await store.admitScanPage(t, binding, generation, cursor, limit, options.exclude);
    checkPage(page, cursor, limit);
    pages.push(page);
    if (page.exhausted) break;
    if (options.between) await options.between(pages.length - 1, page);
    cursor = page.nextAfterSequence;
  }
  const keys = pages.flatMap((p) => p.keys);
  const ids = keys.map((k) => k.scopeId);
  assert.equal(new Set(ids).size, ids.length, `a key was admitted twice in one pass: ${ids.join(', ')}`);
  return { pages, keys };
}

/** Polls an interval-1s check until it is due (bounded); every refusal must report the due time. */
async function startNextIntervalScan(store: Store, t: Term, binding: string): Promise<ScanStart> {
  const first = await store.readBindingState(binding);
  assert.equal(first.scanInProgress, false, 'precondition: no scan in progress');
  const checkpoint = first.lastScheduleCheckpointAt;
  const polled = await waitFor(async (): Promise<ScanStart | null> => {
    const s = await store.beginScan(t, binding, { kind: 'interval', intervalSeconds: 1 });
    if (s.outcome === 'not_due') {
      if (checkpoint) assert.equal(ms(s.nextDueAt), ms(checkpoint) + 1000);
      return null;
    }
    return s;
  }, 5_000);
  assert.ok(polled, 'waitFor returned no scan');
  const started: ScanStart = polled;
  assert.equal(started.outcome, 'started');
  assert.equal(started.scanGeneration, first.scanGeneration + 1);
  if (checkpoint) assert.ok(ms(started.lastScheduleCheckpointAt) >= ms(checkpoint) + 1000, 'started before the interval elapsed');
  return started;
}

async function markMany(store: Store, binding: string, ids: string[]): Promise<void> {
  await store.transaction(async (tx) => {
    for (const id of ids) await store.markDirty(binding, id, tx);
  });
}

const range = (prefix: string, from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `${prefix}${String(from + i).padStart(4, '0')}`);

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  {
    describe(`[${backend}] scans`, () => {
      let fx: BackendFixture;
      before(async () => {
        fx = await createBackend(backend);
      });
      after(async () => {
        await fx.cleanup();
      });

      test('interval: first check needs dirty work; start records generation, upper bound, checkpoint; resume; due after T', async () => {
        const { store } = fx;
        const t = await takeTerm(store, 'h1', LONG_TTL_MS);
        const b = 'iv';
        const never = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 60 });
        assert.deepEqual(
          [never.outcome, never.scanGeneration, never.scanInProgress, never.lastScheduleCheckpointAt, never.nextDueAt, never.scanUpperPendingSequence],
          ['not_due', 0, false, null, null, null],
        );
        // A registered key without ordinary work, and dirty work of another binding, do not make it due.
        await store.acceptRequest(b, 'requested-only');
        await store.markDirty('iv-other', 'x');
        assert.equal((await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 60 })).outcome, 'not_due');
        assert.equal((await store.readBindingState(b)).lastScheduleCheckpointAt, null, 'a refused first check records no checkpoint');

        await store.markDirty(b, 'd1');
        const last = await store.acceptRequest(b, 'r2'); // the binding's largest pending_sequence
        await store.markDirty('iv-other', 'y'); // registered later, in another binding

        const before_ = (await store.readBindingState(b)).dbNow;
        const s1 = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 60 });
        const after_ = (await store.readBindingState(b)).dbNow;
        assert.equal(s1.outcome, 'started');
        assert.equal(s1.scanGeneration, 1);
        assert.equal(s1.scanInProgress, true);
        assert.equal(s1.scanUpperPendingSequence, last.pendingSequence);
        const c1 = ms(s1.lastScheduleCheckpointAt);
        assert.ok(before_.getTime() <= c1 && c1 <= after_.getTime(), 'checkpoint is the database time of the start');
        assert.ok(c1 <= s1.dbNow.getTime(), 'checkpoint is not after db_now');
        assert.equal(ms(s1.nextDueAt), c1 + 60_000);

        const state = await store.readBindingState(b);
        assert.deepEqual(
          [state.scanGeneration, state.scanInProgress, state.scanUpperPendingSequence, ms(state.lastScheduleCheckpointAt), state.scanFinishedAt],
          [1, true, last.pendingSequence, c1, null],
        );
        assert.ok(state.scanStartedAt, 'scan_started_at is recorded');

        // Resumed whatever the policy, with the same generation, bound and checkpoint.
        const fireInPast = new Date(after_.getTime() - 3_600_000);
        for (const policy of [{ kind: 'interval', intervalSeconds: 60 }, { kind: 'off' }, { kind: 'cron', fireAt: fireInPast }] as const) {
          const r = await store.beginScan(t, b, policy);
          assert.deepEqual(
            [r.outcome, r.scanGeneration, r.scanUpperPendingSequence, r.scanInProgress, ms(r.lastScheduleCheckpointAt)],
            ['resumed', 1, last.pendingSequence, true, c1],
            `resume with policy ${policy.kind}`,
          );
        }
        // A key registered during the scan does not move its upper bound.
        await store.markDirty(b, 'late');
        assert.equal((await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 60 })).scanUpperPendingSequence, last.pendingSequence);

        assert.equal((await store.finishScan(t, b, 1)).outcome, 'finished');
        const early = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 3600 });
        assert.deepEqual(
          [early.outcome, early.scanGeneration, early.scanInProgress, ms(early.lastScheduleCheckpointAt), ms(early.nextDueAt)],
          ['not_due', 1, false, c1, c1 + 3_600_000],
        );
        assert.equal((await store.beginScan(t, b, { kind: 'off' })).outcome, 'not_due');

        const s2 = await startNextIntervalScan(store, t, b);
        assert.equal(s2.scanGeneration, 2);
        assert.ok(ms(s2.lastScheduleCheckpointAt) > c1, 'the new checkpoint is later');
        assert.equal(ms(s2.nextDueAt), ms(s2.lastScheduleCheckpointAt) + 1000);
        const late = await mustRead(store, b, 'late');
        assert.equal(s2.scanUpperPendingSequence, late.pendingSequence);
        await store.finishScan(t, b, 2);
      });

      test('cron: first check catches up; checkpoint = fire, only forward; future fire refused', async () => {
        const { store } = fx;
        const t = await takeTerm(store, 'h1', LONG_TTL_MS);
        const b = 'cron';
        const initial = await store.readBindingState(b);
        assert.deepEqual(
          [initial.lastScheduleCheckpointAt, initial.scanGeneration, initial.scanInProgress, initial.scanUpperPendingSequence],
          [null, 0, false, null],
        );
        const now = initial.dbNow.getTime();
        const fireA = new Date(now - 10 * 60_000 + 123);

        // Never checked: due at once (no dirty work needed for the catch-up).
        const s1 = await store.beginScan(t, b, { kind: 'cron', fireAt: fireA });
        assert.deepEqual(
          [s1.outcome, s1.scanGeneration, s1.scanInProgress, ms(s1.lastScheduleCheckpointAt), s1.nextDueAt],
          ['started', 1, true, fireA.getTime(), null],
        );
        await store.finishScan(t, b, 1);

        const same = await store.beginScan(t, b, { kind: 'cron', fireAt: fireA });
        assert.deepEqual([same.outcome, same.scanGeneration, ms(same.lastScheduleCheckpointAt)], ['not_due', 1, fireA.getTime()]);
        const older = await store.beginScan(t, b, { kind: 'cron', fireAt: new Date(fireA.getTime() - 5 * 60_000) });
        assert.deepEqual([older.outcome, older.scanGeneration, ms(older.lastScheduleCheckpointAt)], ['not_due', 1, fireA.getTime()]);
        assert.equal(ms((await store.readBindingState(b)).lastScheduleCheckpointAt), fireA.getTime(), 'checkpoint never moves backwards');

        const fireB = new Date(fireA.getTime() + 5 * 60_000);
        const s2 = await store.beginScan(t, b, { kind: 'cron', fireAt: fireB });
        assert.deepEqual([s2.outcome, s2.scanGeneration, ms(s2.lastScheduleCheckpointAt)], ['started', 2, fireB.getTime()]);
        await store.finishScan(t, b, 2);

        const future = new Date((await store.readBindingState(b)).dbNow.getTime() + 3_600_000);
        await rejectsWithCode(store.beginScan(t, b, { kind: 'cron', fireAt: future }), 'cron_fire_in_future');
        const unchanged = await store.readBindingState(b);
        assert.deepEqual([unchanged.scanGeneration, unchanged.scanInProgress, ms(unchanged.lastScheduleCheckpointAt)], [2, false, fireB.getTime()]);

        // The latest fire <= database time, computed from db_now.
        const fireC = (await store.readBindingState(b)).dbNow;
        const s3 = await store.beginScan(t, b, { kind: 'cron', fireAt: fireC });
        assert.deepEqual([s3.outcome, s3.scanGeneration, ms(s3.lastScheduleCheckpointAt)], ['started', 3, fireC.getTime()]);
        // cron_fire_in_future is refused even while a scan is in progress.
        await rejectsWithCode(store.beginScan(t, b, { kind: 'cron', fireAt: new Date(fireC.getTime() + 3_600_000) }), 'cron_fire_in_future');
        assert.equal((await store.finishScan(t, b, 3)).outcome, 'finished');
      });

      test('off: never starts a new scan, even with dirty work or an elapsed interval', async () => {
        const { store } = fx;
        const t = await takeTerm(store, 'h1', LONG_TTL_MS);
        const b = 'off';
        await store.markDirty(b, 'k1');
        const s0 = await store.beginScan(t, b, { kind: 'off' });
        assert.deepEqual([s0.outcome, s0.scanGeneration, s0.scanInProgress, s0.lastScheduleCheckpointAt], ['not_due', 0, false, null]);
        const s1 = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 1 });
        assert.equal(s1.outcome, 'started');
        await store.finishScan(t, b, s1.scanGeneration);
        const c1 = ms(s1.lastScheduleCheckpointAt);
        // Wait (bounded) until an interval of 1 s would be due, then 'off' still does not start.
        await waitFor(async () => (await store.readBindingState(b)).dbNow.getTime() >= c1 + 1000, 5_000);
        const off = await store.beginScan(t, b, { kind: 'off' });
        assert.deepEqual([off.outcome, off.scanGeneration, off.scanInProgress, ms(off.lastScheduleCheckpointAt)], ['not_due', 1, false, c1]);
        const state = await store.readBindingState(b);
        assert.deepEqual([state.scanGeneration, state.scanInProgress], [1, false]);
        // It was due: the interval policy starts it now.
        const s2 = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 1 });
        assert.equal(s2.outcome, 'started');
        assert.equal(s2.scanGeneration, 2);
        await store.finishScan(t, b, 2);
      });

      test('admission: limit, order, dirty > clean only, request reuse, exclusions unmarked, marks', async () => {
        const { store } = fx;
        const t = await takeTerm(store, 'h1', LONG_TTL_MS);
        const b = 'adm';
        // Registration order = pending_sequence order.
        await store.markDirty(b, 'a01'); // dirty, no request -> requested 1
        await store.acceptRequest(b, 'a02'); // requested, never dirty -> never admitted
        await store.markDirty(b, 'a03');
        await store.acceptRequest(b, 'a03'); // outstanding request 1 -> reused
        await store.markDirty(b, 'a04');
        await store.acceptRequest(b, 'a04');
        await store.ackInvocation(t, { bindingName: b, scopeId: 'a04', claimedRequestGeneration: 1 }); // handled 1, still dirty -> 2
        await store.markDirty(b, 'a05');
        await store.acceptRequest(b, 'a05');
        await store.ackInvocation(t, { bindingName: b, scopeId: 'a05', claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 1 }); // clean
        await store.markDirty(b, 'a06'); // excluded
        for (let i = 0; i < 3; i++) await store.markDirty(b, 'a07');
        await store.markDirty(b, 'a08');
        await store.markDirty(b, 'a09');
        await store.acceptRequest(b, 'a09');
        await store.acceptRequest(b, 'a09'); // outstanding 2
        await store.markDirty(b, 'a10'); // excluded
        for (const id of ['a11', 'a12', 'a13', 'a14']) await store.markDirty(b, id);
        await store.markDirty(b, 'a15');
        await store.acceptRequest(b, 'a15');
        await store.ackInvocation(t, { bindingName: b, scopeId: 'a15', claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 1 });
        await store.markDirty(b, 'a15'); // dirty again after being clean -> admitted, requested 2
        await store.markDirty('adm-other', 'a01'); // other binding: never admitted here

        const ids = ['a01', 'a02', 'a03', 'a04', 'a05', 'a06', 'a07', 'a08', 'a09', 'a10', 'a11', 'a12', 'a13', 'a14', 'a15'];
        const before_ = new Map<string, IntentSnapshot>();
        for (const id of ids) before_.set(id, await mustRead(store, b, id));
        const otherBefore = await mustRead(store, 'adm-other', 'a01');

        const scan = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 3600 });
        assert.equal(scan.outcome, 'started');
        const g = scan.scanGeneration;
        // Exact matching: 'a1' (a prefix of a10..a15) and 'xa13x' (contains a13) exclude no key.
        const exclude = ['a06', 'a10', 'a1', 'xa13x'];
        const { pages, keys } = await admitAll(store, t, b, g, 4, { exclude });
        assert.deepEqual(
          pages.map((p) => p.keys.length),
          [4, 4, 3],
        );
        const expectedOrder = ['a01', 'a03', 'a04', 'a07', 'a08', 'a09', 'a11', 'a12', 'a13', 'a14', 'a15'];
        assert.deepEqual(
          keys.map((k) => k.scopeId),
          expectedOrder,
        );
        const expectedRequested: Record<string, number> = {
          a01: 1,
          a03: 1,
          a04: 2,
          a07: 1,
          a08: 1,
          a09: 2,
          a11: 1,
          a12: 1,
          a13: 1,
          a14: 1,
          a15: 2,
        };
        for (const k of keys) {
          assert.equal(k.requestedGeneration, expectedRequested[k.scopeId], `requested generation of ${k.scopeId}`);
          const stored = await mustRead(store, b, k.scopeId);
          assert.deepEqual(
            [k.pendingSequence, k.requestedGeneration, k.handledGeneration, k.dirtyGeneration, k.cleanGeneration],
            [stored.pendingSequence, stored.requestedGeneration, stored.handledGeneration, stored.dirtyGeneration, stored.cleanGeneration],
            `returned generations of ${k.scopeId} equal the stored ones`,
          );
          assert.equal(stored.lastAutoScanGeneration, g, `${k.scopeId} carries the scan mark`);
          const prior = before_.get(k.scopeId)!;
          assert.deepEqual(
            [stored.dirtyGeneration, stored.cleanGeneration, stored.handledGeneration],
            [prior.dirtyGeneration, prior.cleanGeneration, prior.handledGeneration],
            'admission touches only the requested generation and the mark',
          );
        }
        // Clean keys, requested-only keys and excluded keys: untouched and unmarked.
        for (const id of ['a02', 'a05', 'a06', 'a10']) {
          const stored = await mustRead(store, b, id);
          const prior = before_.get(id)!;
          assert.equal(stored.lastAutoScanGeneration, 0, `${id} must not be marked`);
          assert.equal(stored.requestedGeneration, prior.requestedGeneration, `${id} must not get a request`);
        }
        assert.deepEqual(await mustRead(store, 'adm-other', 'a01'), otherBefore);

        // The same scan re-run from the first page (same exclusions): nothing again.
        const again = await store.admitScanPage(t, b, g, 0, 100, exclude);
        assert.deepEqual(again.keys, []);
        assert.equal(again.exhausted, true);

        await rejectsWithCode(store.admitScanPage(t, b, g + 1, 0, 4), 'scan_stale');
        await rejectsWithCode(store.admitScanPage(t, 'adm-never', 1, 0, 4), 'scan_stale');
        assert.equal((await store.finishScan(t, b, g)).outcome, 'finished');
        await rejectsWithCode(store.admitScanPage(t, b, g, 0, 4), 'scan_stale');
        for (const id of ['a06', 'a10']) assert.equal((await mustRead(store, b, id)).lastAutoScanGeneration, 0, 'stale admission wrote nothing');

        // The next scan generation admits the previously excluded keys; outstanding requests are reused.
        const next = await startNextIntervalScan(store, t, b);
        const second = await admitAll(store, t, b, next.scanGeneration, 100);
        const byId = new Map(second.keys.map((k) => [k.scopeId, k]));
        assert.deepEqual(
          second.keys.map((k) => k.scopeId),
          ['a01', 'a03', 'a04', 'a06', 'a07', 'a08', 'a09', 'a10', 'a11', 'a12', 'a13', 'a14', 'a15'],
        );
        assert.equal(byId.get('a06')!.requestedGeneration, 1);
        assert.equal(byId.get('a10')!.requestedGeneration, 1);
        for (const id of expectedOrder) {
          assert.equal(byId.get(id)!.requestedGeneration, expectedRequested[id], `${id}: outstanding request reused, not duplicated`);
          assert.equal((await mustRead(store, b, id)).lastAutoScanGeneration, next.scanGeneration);
        }
        await store.finishScan(t, b, next.scanGeneration);
      });

      test('A6: crash after admission, before finish: resumed scan re-run from 0 admits nothing twice', async () => {
        const { store } = fx;
        const t = await takeTerm(store, 'h1', LONG_TTL_MS);
        const b = 'a6-all';
        const ids = range('k', 1, 7);
        await markMany(store, b, ids);
        const scan = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 3600 });
        assert.equal(scan.outcome, 'started');
        // Admission committed; the caller 'crashes' before queueing anything or finishing.
        await admitAll(store, t, b, scan.scanGeneration, 3);
        const admitted = new Map<string, IntentSnapshot>();
        for (const id of ids) admitted.set(id, await mustRead(store, b, id));
        // A worker acknowledged one of them (request handled, ordinary work left) before the crash.
        await store.ackInvocation(t, { bindingName: b, scopeId: 'k0002', claimedRequestGeneration: 1 });

        // The successor: another connection, a new term.
        await store.invalidateTerm('global', { holderId: t.holderId, supervisorGeneration: t.supervisorGeneration });
        const successor = fx.openStore();
        const t2 = await takeTerm(successor, 'h1', LONG_TTL_MS);
        assert.ok(t2.supervisorGeneration > t.supervisorGeneration, 'the successor has a newer term');
        await rejectsWithCode(store.admitScanPage(t, b, scan.scanGeneration, 0, 3), 'term_lost');

        const resumed = await successor.beginScan(t2, b, { kind: 'interval', intervalSeconds: 3600 });
        assert.deepEqual(
          [resumed.outcome, resumed.scanGeneration, resumed.scanUpperPendingSequence],
          ['resumed', scan.scanGeneration, scan.scanUpperPendingSequence],
        );
        const rerun = await admitAll(successor, t2, b, resumed.scanGeneration, 3);
        assert.deepEqual(rerun.keys, [], 'nothing is admitted twice in the same scan generation');
        for (const id of ids) {
          const now = await mustRead(successor, b, id);
          assert.equal(now.requestedGeneration, admitted.get(id)!.requestedGeneration, `${id} requested unchanged`);
        }
        // Every admitted request is still discoverable (except the acknowledged one).
        const owed = await successor.listOwedRequests(b, 0, 100);
        assert.deepEqual(
          owed.keys.map((k) => k.scopeId),
          ids.filter((id) => id !== 'k0002'),
        );
        assert.equal((await successor.finishScan(t2, b, resumed.scanGeneration)).outcome, 'finished');
      });

      test('A6: crash in the middle of paging: re-scan from the first page admits only the rest', async () => {
        const { store } = fx;
        const t = await takeTerm(store, 'h1', LONG_TTL_MS);
        const b = 'a6-mid';
        const ids = range('k', 1, 10);
        await markMany(store, b, ids);
        const scan = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 3600 });
        assert.equal(scan.outcome, 'started');
        const first = await store.admitScanPage(t, b, scan.scanGeneration, 0, 4);
        assert.deepEqual(
          first.keys.map((k) => k.scopeId),
          ids.slice(0, 4),
        );
        // Crash: the result is lost. A new dirty mark on an admitted key does not reset its mark.
        await store.markDirty(b, 'k0001');

        const resumed = await store.beginScan(t, b, { kind: 'cron', fireAt: (await store.readBindingState(b)).dbNow });
        assert.deepEqual([resumed.outcome, resumed.scanGeneration], ['resumed', scan.scanGeneration]);
        const rest = await admitAll(store, t, b, scan.scanGeneration, 4);
        assert.deepEqual(
          rest.keys.map((k) => k.scopeId),
          ids.slice(4),
        );
        assert.deepEqual(
          rest.pages.map((p) => p.keys.length),
          [4, 2],
        );
        for (const id of ids) assert.equal((await mustRead(store, b, id)).requestedGeneration, 1, `${id} admitted exactly once`);
        assert.deepEqual(
          (await store.listOwedRequests(b, 0, 100)).keys.map((k) => k.scopeId),
          ids,
        );
        await store.finishScan(t, b, scan.scanGeneration);
      });

      test('upper bound: new keys during paging do not extend the scan; the next scan admits them', async () => {
        const { store } = fx;
        const t = await takeTerm(store, 'h1', LONG_TTL_MS);
        const b = 'upper';
        const original = range('o', 1, 6);
        await markMany(store, b, original);
        const scan = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 3600 });
        assert.equal(scan.outcome, 'started');
        const upper = scan.scanUpperPendingSequence!;
        assert.equal(upper, (await mustRead(store, b, 'o0006')).pendingSequence);

        const added: string[] = [];
        let n = 0;
        const { pages, keys } = await admitAll(store, t, b, scan.scanGeneration, 2, {
          between: async (pageIndex, page) => {
            // New scopes keep arriving between pages ...
            const fresh = range('n', n + 1, n + 3);
            n += 3;
            await markMany(store, b, fresh);
            added.push(...fresh);
            // ... and an already admitted key gets a new dirty mark.
            await store.markDirty(b, page.keys[0].scopeId);
            assert.ok(pageIndex < 10, 'the scan must end within a bounded number of pages');
          },
        });
        assert.deepEqual(
          keys.map((k) => k.scopeId),
          original,
          'only keys up to the upper bound, each once',
        );
        assert.deepEqual(
          pages.map((p) => [p.keys.length, p.exhausted]),
          [
            [2, false],
            [2, false],
            [2, false],
            [0, true],
          ],
        );
        for (const k of keys) assert.ok(k.pendingSequence <= upper, `${k.scopeId} is beyond the upper bound`);
        assert.ok(added.length >= 6, 'new keys were registered while paging');
        for (const id of added) {
          const i = await mustRead(store, b, id);
          assert.ok(i.pendingSequence > upper, `${id} registered during the scan must be beyond its upper bound`);
          assert.equal(i.lastAutoScanGeneration, 0);
          assert.equal(i.requestedGeneration, 0);
        }
        // Re-marked admitted keys are not re-admitted in this generation, even from the first page.
        assert.deepEqual((await store.admitScanPage(t, b, scan.scanGeneration, 0, 100)).keys, []);
        for (const id of original) assert.equal((await mustRead(store, b, id)).requestedGeneration, 1);
        assert.equal((await store.finishScan(t, b, scan.scanGeneration)).outcome, 'finished');

        const next = await startNextIntervalScan(store, t, b);
        assert.ok(
          next.scanUpperPendingSequence! >= (await mustRead(store, b, added[added.length - 1])).pendingSequence,
          "the next scan's upper bound covers the keys registered during the previous scan",
        );
        const second = await admitAll(store, t, b, next.scanGeneration, 100);
        assert.deepEqual(
          second.keys.map((k) => k.scopeId),
          [...original, ...added],
        );
        for (const id of added) assert.equal((await mustRead(store, b, id)).requestedGeneration, 1);
        for (const id of original) assert.equal((await mustRead(store, b, id)).requestedGeneration, 1, `${id}: outstanding request reused`);
        await store.finishScan(t, b, next.scanGeneration);
      });

      test('A8: a dirty mark on an already scanned key during its run survives the ack; the next scan admits it', async () => {
        const { store } = fx;
        const t = await takeTerm(store, 'h1', LONG_TTL_MS);
        const b = 'a8-scan';
        await store.markDirty(b, 'k');
        const scan = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 3600 });
        assert.equal(scan.outcome, 'started');
        const admitted = await admitAll(store, t, b, scan.scanGeneration, 10);
        assert.deepEqual(
          admitted.keys.map((k) => [k.scopeId, k.requestedGeneration]),
          [['k', 1]],
        );
        await store.finishScan(t, b, scan.scanGeneration);

        const snapshot = await mustRead(store, b, 'k'); // the invocation starts
        await store.markDirty(b, 'k'); // a later notification while it runs
        const ack = await store.transaction((tx) =>
          store.ackInvocation(
            t,
            {
              bindingName: b,
              scopeId: 'k',
              claimedRequestGeneration: snapshot.requestedGeneration,
              cleanThroughDirtyGeneration: snapshot.dirtyGeneration,
            },
            tx,
          ),
        );
        assert.deepEqual([ack.outcome, ack.handledGeneration, ack.cleanGeneration, ack.dirtyGeneration], ['acknowledged', 1, 1, 2]);
        assert.deepEqual((await store.listOwedRequests(b, 0, 10)).keys, [], 'the admitted request is handled');

        const next = await startNextIntervalScan(store, t, b);
        const again = await admitAll(store, t, b, next.scanGeneration, 10);
        assert.deepEqual(
          again.keys.map((k) => [k.scopeId, k.requestedGeneration, k.handledGeneration]),
          [['k', 2, 1]],
        );
        await store.finishScan(t, b, next.scanGeneration);
      });

      test('finishScan: finished, then already_finished; wrong generation is stale; no worker needed', async () => {
        const { store } = fx;
        const t = await takeTerm(store, 'h1', LONG_TTL_MS);
        const b = 'fin';
        await rejectsWithCode(store.finishScan(t, b, 1), 'scan_stale');
        await store.markDirty(b, 'k1');
        await store.markDirty(b, 'k2');
        const scan = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 3600 });
        assert.equal(scan.outcome, 'started');
        const g = scan.scanGeneration;
        await admitAll(store, t, b, g, 10);
        await rejectsWithCode(store.finishScan(t, b, g + 1), 'scan_stale');
        assert.equal((await store.readBindingState(b)).scanInProgress, true, 'a stale finish changes nothing');

        // No worker ran and nothing is acknowledged: finishing does not wait for that.
        const f1 = await store.finishScan(t, b, g);
        assert.deepEqual([f1.outcome, f1.scanGeneration, ms(f1.lastScheduleCheckpointAt)], ['finished', g, ms(scan.lastScheduleCheckpointAt)]);
        const state = await store.readBindingState(b);
        assert.equal(state.scanInProgress, false);
        assert.ok(state.scanFinishedAt, 'scan_finished_at is recorded');
        assert.equal(state.scanGeneration, g);
        const f2 = await store.finishScan(t, b, g);
        assert.deepEqual([f2.outcome, f2.scanGeneration], ['already_finished', g]);
        assert.deepEqual(await store.readBindingState(b).then((s) => [s.scanInProgress, ms(s.scanFinishedAt)]), [false, ms(state.scanFinishedAt)]);
        // The admitted requests stay owed for the workers.
        assert.deepEqual(
          (await store.listOwedRequests(b, 0, 10)).keys.map((k) => k.scopeId),
          ['k1', 'k2'],
        );

        // After a newer scan, the older generation is stale.
        const next = await startNextIntervalScan(store, t, b);
        await rejectsWithCode(store.finishScan(t, b, g), 'scan_stale');
        assert.equal((await store.readBindingState(b)).scanInProgress, true);
        assert.equal((await store.finishScan(t, b, next.scanGeneration)).outcome, 'finished');
      });

      test('a page of 500 keys admits in one call: 1200 dirty keys -> 500, 500, 200', async () => {
        const { store } = fx;
        const t = await takeTerm(store, 'h1', LONG_TTL_MS);
        const b = 'bulk';
        const ids = range('s', 1, 1200);
        await markMany(store, b, ids);
        const scan = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 3600 });
        assert.equal(scan.outcome, 'started');
        const { pages, keys } = await admitAll(store, t, b, scan.scanGeneration, 500);
        assert.deepEqual(
          pages.map((p) => [p.keys.length, p.exhausted]),
          [
            [500, false],
            [500, false],
            [200, true],
          ],
        );
        assert.deepEqual(
          keys.map((k) => k.scopeId),
          ids,
        );
        assert.ok(
          keys.every((k) => k.requestedGeneration === 1),
          'every key got requested generation 1',
        );
        const owedCount = await fx.query(
          'SELECT COUNT(*) AS n FROM pc_artifact_processing_intents WHERE binding_name = ? AND last_auto_scan_generation = ? AND requested_generation = 1',
          [b, scan.scanGeneration],
        );
        assert.equal(Number(owedCount[0].n), 1200);
        await store.finishScan(t, b, scan.scanGeneration);
      });
    });
  }

  if (backend === 'mysql')
    describe('[mysql] scans: an admission page is strictly bounded by its limit (COMPATIBILITY row 5)', () => {
      let fx: BackendFixture;
      before(async () => {
        fx = await createBackend('mysql');
      });
      after(async () => {
        await fx.cleanup();
      });

      test('keys of the page range that start qualifying between the page selection and its UPDATE are admitted only up to the limit; the next pages take the rest', async () => {
        const { store } = fx;
        const t = await takeTerm(store, 'h1', LONG_TTL_MS);
        const b = 'sparse';
        const ids = range('k', 1, 10);
        await markMany(store, b, ids);
        // A sparse binding: only the first and the last key have work; the eight in between are clean.
        const middle = ids.slice(1, 9);
        for (const id of middle) {
          await store.acceptRequest(b, id);
          await store.ackInvocation(t, { bindingName: b, scopeId: id, claimedRequestGeneration: 1, cleanThroughDirtyGeneration: 1 });
        }
        const scan = await store.beginScan(t, b, { kind: 'interval', intervalSeconds: 3600 });
        assert.equal(scan.outcome, 'started');

        const { host, port, user, password, database } = fx.target as Extract<BackendFixture['target'], { backend: 'mysql' }>;
        const admitter = MysqlStore.open({ host, port, user, password, database }, 1);
        const other = fx.openStore();
        try {
          const admitterId = Number((await admitter.domainQuery('SELECT CONNECTION_ID() AS id'))[0].id);
          // Another transaction holds the row lock of the first candidate (a new dirty mark of k0001).
          let held!: () => void;
          const heldP = new Promise<void>((r) => {
            held = r;
          });
          let release!: () => void;
          const releaseP = new Promise<void>((r) => {
            release = r;
          });
          const txP = other.transaction(async (tx) => {
            await other.markDirty(b, 'k0001', tx);
            held();
            await releaseP;
          });
          txP.catch(() => undefined);
          await heldP;
          // The page's snapshot read sees two candidates (k0001, k0010), so its range covers all ten
          // keys; its UPDATE then waits for the lock on k0001.
          const pageP = admitter.admitScanPage(t, b, scan.scanGeneration, 0, 2);
          pageP.catch(() => undefined);
          await waitFor(
            async () => {
              const rows = await fx.query("SELECT INFO AS info FROM information_schema.PROCESSLIST WHERE ID = ? AND COMMAND = 'Query'", [admitterId]);
              return rows.length === 1 && /^\s*UPDATE pc_artifact_processing_intents/.test(String(rows[0].info));
            },
            10_000,
            10,
          );
          // Meanwhile the eight middle keys become dirty and commit: they now qualify inside the range.
          await markMany(store, b, middle);
          release();
          await txP;
          const page = await pageP;
          assert.deepEqual(
            page.keys.map((k) => k.scopeId),
            ['k0001', 'k0002'],
            'at most the limit, in pending_sequence order',
          );
          assert.equal(page.exhausted, false);
          assert.equal(page.nextAfterSequence, page.keys[1].pendingSequence, 'the cursor stops at the last admitted key');
          const rest = await admitAll(store, t, b, scan.scanGeneration, 2, { after: page.nextAfterSequence });
          assert.deepEqual(
            rest.keys.map((k) => k.scopeId),
            ids.slice(2),
            'the rest of the range is admitted by the next pages of the same scan',
          );
          assert.equal((await store.finishScan(t, b, scan.scanGeneration)).outcome, 'finished');
        } finally {
          await admitter.close();
        }
      });
    });
}
