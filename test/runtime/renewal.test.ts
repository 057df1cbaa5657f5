// RFC 8 (OceanBase): "续租失败立即停止派发，尽力终止 Worker". On MariaDB, with the runtime's own
// renewal statement made to fail or to hang (injected in the supervisor process; the database
// itself stays healthy for the workers and the test):
//
//   - a failed renewal suspends admission and dispatch at once: a request accepted meanwhile is
//     not dispatched until a renewal of the same term succeeds; the term does not change;
//   - a hung renewal cannot keep the leader going: dispatch is suspended within one statement
//     bound, and at the local deadline (TTL after the last good renewal) the term is lost and the
//     running worker is terminated; once renewals work again the keeper takes the lease with a
//     higher generation and the owed work runs under it;
//   - shutdown does not hang on a hung renewal.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  P,
  createFixtureTables,
  intentOf,
  isAlive,
  openGate,
  runs,
  setBehaviour,
  startRuntime,
  statsOf,
  testFamily,
  waitForState,
} from '../fixtures/runtime-harness.ts';
import { withTimeout } from '../helpers/store-asserts.ts';

const F = 'fx-renew';

type RenewFn = (...args: unknown[]) => Promise<unknown>;

/** Replaces the runtime store's renewTerm; returns a function that restores it. */
function injectRenewal(runtime: Runtime, replacement: (original: RenewFn, args: unknown[]) => Promise<unknown>): () => void {
  const store = runtime.store as unknown as { renewTerm: RenewFn };
  const original = store.renewTerm.bind(runtime.store) as RenewFn;
  store.renewTerm = (...args: unknown[]) => replacement(original, args);
  return () => {
    store.renewTerm = original;
  };
}

function supervisorOf(runtime: Runtime) {
  return runtime.status().supervisors.find((s) => s.supervisorKey === 'global')!;
}

describe('[mysql] a failed or hung lease renewal stops dispatch at once', () => {
  let fx: BackendFixture;
  let runtime: Runtime | null = null;
  const logs: Array<Record<string, unknown>> = [];

  before(async () => {
    fx = await createBackend('mysql');
    await createFixtureTables(fx);
    await setBehaviour(fx, F, 'held', 'gate');
    // Renewal every 0.5 s (FAST_TUNING), a 5 s TTL, grace 1 s.
    runtime = await startRuntime(fx, [testFamily(F, { maxWorkers: 2 })], { logSink: logs, env: { [`${P}ARTIFACT_PROCESSING_LEASE_TTL_SECONDS`]: '5' } });
  });
  after(async () => {
    await runtime?.stop();
    await fx?.cleanup();
  });

  test('a failing renewal suspends dispatch (same term); a good renewal resumes it', async () => {
    const rt = runtime!;
    const generation = supervisorOf(rt).supervisorGeneration;
    let failing = true;
    const restore = injectRenewal(rt, (original, args) => (failing ? Promise.reject(new Error('connection reset (injected)')) : original(...args)));
    try {
      await waitFor(() => supervisorOf(rt).dispatchSuspended, 5_000);
      const failuresAtSuspension = supervisorOf(rt).renewalFailuresTotal;
      const invocations = statsOf(rt, F).invocations;
      await rt.trigger(F, 'during');
      // At least two more failed renewals (about a period each): still nothing dispatched.
      await waitFor(() => supervisorOf(rt).renewalFailuresTotal >= failuresAtSuspension + 2, 5_000);
      assert.equal(statsOf(rt, F).invocations, invocations, 'no dispatch while the renewal fails');
      assert.equal((await runs(fx, F, 'during')).length, 0);
      assert.equal(supervisorOf(rt).state, 'leader', 'the term is kept while it may still be renewed');
      failing = false;
      await waitFor(() => !supervisorOf(rt).dispatchSuspended, 5_000);
      await waitForState(fx, rt, [F], async () => (await intentOf(fx, F, 'during'))?.handledGeneration === 1, 20_000);
      assert.equal(supervisorOf(rt).supervisorGeneration, generation, 'the same term resumed');
      assert.ok(logs.some((l) => l.msg === 'lease renewed; dispatch resumed'));
    } finally {
      restore();
    }
  });

  test('a hung renewal: dispatch suspended, the term lost at the local deadline, the worker terminated; then recovery', async () => {
    const rt = runtime!;
    const generation = supervisorOf(rt).supervisorGeneration!;
    await rt.trigger(F, 'held');
    const [held] = (await waitFor(async () => {
      const list = await runs(fx, F, 'held');
      return list.length === 1 ? list : undefined;
    }, 20_000)) as unknown as [{ pid: number }];
    let hanging = true;
    const restore = injectRenewal(rt, (original, args) => (hanging ? new Promise(() => undefined) : original(...args)));
    try {
      await waitFor(() => supervisorOf(rt).dispatchSuspended, 5_000);
      await rt.trigger(F, 'late');
      const lost = await waitFor<Record<string, unknown>>(
        () => logs.find((l) => l.msg === 'term lost; dispatch stopped' && l.supervisorGeneration === generation) as Record<string, unknown>,
        10_000,
      );
      assert.equal(lost.reason, 'renewal_deadline_passed');
      await waitFor(() => !isAlive(held.pid), 10_000);
      // The keeper may lead again at once (it invalidates the lost term first): 'late' may run
      // under the new term, never under the one whose renewal hung.
      for (const r of await runs(fx, F, 'late')) assert.ok(r.startedMs >= Number(lost.time), 'dispatched while the renewal hung');
      assert.equal(statsOf(rt, F).failures.failed ?? 0, 0, 'the terminated worker is not a failure (lost leadership is a control event)');
      await openGate(fx, F, 'held');
      hanging = false;
      await waitFor(() => (supervisorOf(rt).supervisorGeneration ?? 0) > generation, 15_000);
      await waitForState(
        fx,
        rt,
        [F],
        async () => (await intentOf(fx, F, 'held'))?.handledGeneration === 1 && (await intentOf(fx, F, 'late'))?.handledGeneration === 1,
        20_000,
      );
      assert.deepEqual(statsOf(rt, F).failures, {}, 'no failure was recorded for the lost term');
    } finally {
      restore();
    }
  });

  test('shutdown does not hang on a hung renewal', async () => {
    const rt = runtime!;
    await waitFor(() => supervisorOf(rt).state === 'leader' && !supervisorOf(rt).dispatchSuspended, 15_000);
    // Let one renewal start and hang.
    let issued = 0;
    const restore2 = injectRenewal(rt, () => {
      issued += 1;
      return new Promise(() => undefined);
    });
    await waitFor(() => issued >= 1, 5_000);
    await withTimeout(rt.stop(), 15_000, 'runtime.stop() with a hung renewal');
    runtime = null;
    restore2();
    const lease = await fx.store.readLease('global');
    assert.equal(lease.holderId, null, 'the term was still invalidated (the database itself is fine)');
  });
});

// Issue 12 item 3: a freed worker slot starts the next ready key at once, without waiting for an
// examination. That shortcut must still stop while a failed renewal suspends dispatch (RFC 8).
describe('[mysql] a key already in the ready queue is not dispatched while dispatch is suspended', () => {
  const Q = 'fx-renew-queued';
  let fx: BackendFixture;
  let runtime: Runtime | null = null;

  before(async () => {
    fx = await createBackend('mysql');
    await createFixtureTables(fx);
    await setBehaviour(fx, Q, 'first', 'gate');
    // One worker: 'second' waits in the ready queue while 'first' holds the worker at its gate.
    runtime = await startRuntime(fx, [testFamily(Q, { maxWorkers: 1 })], { env: { [`${P}ARTIFACT_PROCESSING_LEASE_TTL_SECONDS`]: '5' } });
  });
  after(async () => {
    await runtime?.stop();
    await fx?.cleanup();
  });

  test('the worker freed during the suspension does not take the queued key; the resumed term does', async () => {
    const rt = runtime!;
    await waitFor(() => supervisorOf(rt).state === 'leader', 15_000);
    await rt.triggerBatch(Q, ['first', 'second']);
    await waitFor(async () => (await runs(fx, Q, 'first')).length === 1, 20_000);
    assert.equal(statsOf(rt, Q).ready, 1, "'second' waits in the ready queue");
    let failing = true;
    const restore = injectRenewal(rt, (original, args) => (failing ? Promise.reject(new Error('connection reset (injected)')) : original(...args)));
    try {
      await waitFor(() => supervisorOf(rt).dispatchSuspended, 5_000);
      const failuresAtSuspension = supervisorOf(rt).renewalFailuresTotal;
      await openGate(fx, Q, 'first');
      await waitFor(async () => (await intentOf(fx, Q, 'first'))?.handledGeneration === 1, 20_000);
      await waitFor(() => statsOf(rt, Q).running === 0, 5_000);
      // Two more failed renewals (about a period each) with the worker free: still not dispatched.
      await waitFor(() => supervisorOf(rt).renewalFailuresTotal >= failuresAtSuspension + 2, 5_000);
      assert.equal((await runs(fx, Q, 'second')).length, 0, 'dispatched while suspended');
      assert.equal(statsOf(rt, Q).ready, 1);
      failing = false;
      await waitFor(() => !supervisorOf(rt).dispatchSuspended, 5_000);
      await waitForState(fx, rt, [Q], async () => (await intentOf(fx, Q, 'second'))?.handledGeneration === 1, 20_000);
    } finally {
      restore();
    }
  });
});
