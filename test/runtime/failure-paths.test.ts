// Failure paths of RFC 7 and the failure record of RFC 12, with real worker processes:
//
//   - a progress (head) CAS conflict re-dispatches after the fixed short delay and does not count
//     as a failure: the consecutive-failure count of a key already in backoff stays as it was;
//   - the scheduling-failure record carries binding, family, scope, trigger, request generation,
//     worker id, term, stage, error code, error type, attempt and delay, and no connection string;
//   - lost leadership (MySQL: the lease invalidated under a running worker) is a control event:
//     the worker is terminated, no failure is recorded, the new term recovers the request;
//   - SQLite: a request notified while an owed-discovery page is being read (and so possibly
//     missed by it) forces another pass before the runtime sleeps (RFC 8).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  P,
  bindingOf,
  createFixtureTables,
  intentOf,
  isAlive,
  openGate,
  partitionOf,
  runs,
  setBehaviour,
  startRuntime,
  statsOf,
  testFamily,
  waitForState,
  type RunRow,
} from '../fixtures/runtime-harness.ts';

const F = 'fx-paths';

for (const backend of BACKENDS) {
  describe(`[${backend}] conflicts, failure records and lost leadership`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;
    const logs: Array<Record<string, unknown>> = [];

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      // A 3 s failure backoff (room to change a key's behaviour before its retry), a 0.1 s conflict delay.
      runtime = await startRuntime(fx, [testFamily(F, { maxWorkers: 2 })], {
        logSink: logs,
        env: { [`${P}ARTIFACT_PROCESSING_RETRY_BASE_SECONDS`]: '3', [`${P}ARTIFACT_PROCESSING_RETRY_MAX_SECONDS`]: '3' },
      });
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('the failure record has the RFC 12 fields; a CAS conflict is a short fixed delay that keeps the failure count', async () => {
      await setBehaviour(fx, F, 'cas', 'fail', { remaining: 1 });
      await runtime.trigger(F, 'cas');
      const failure = (await waitFor(() => logs.find((l) => l.msg === 'scope invocation failed' && l.scope === 'cas'), 20_000)) as Record<string, unknown>;
      const term = runtime.supervisors[0].term!;
      const [run] = await runs(fx, F, 'cas');
      assert.deepEqual(
        {
          binding: failure.binding,
          family: failure.family,
          scope: failure.scope,
          trigger: failure.trigger,
          requestGeneration: failure.requestGeneration,
          workerId: failure.workerId,
          supervisorKey: failure.supervisorKey,
          holderId: failure.holderId,
          supervisorGeneration: failure.supervisorGeneration,
          stage: failure.stage,
          errorCode: failure.errorCode,
          errorType: failure.errorType,
          attempt: failure.attempt,
        },
        {
          binding: bindingOf(F),
          family: F,
          scope: 'cas',
          trigger: 'request',
          requestGeneration: 1,
          workerId: (await fx.query('SELECT worker_id FROM fx_runs WHERE run_token = ?', [run.runToken]))[0].worker_id,
          supervisorKey: 'global',
          holderId: runtime.holderId,
          supervisorGeneration: term.supervisorGeneration,
          stage: 'invocation',
          errorCode: 'failed',
          errorType: 'Error',
          attempt: 1,
        },
      );
      assert.equal(typeof failure.retryInMs, 'number');
      assert.ok((failure.retryInMs as number) > 2000 && (failure.retryInMs as number) <= 3300, `retryInMs ${failure.retryInMs}: about the 3 s base`);
      // Now the retry meets two progress conflicts before it succeeds.
      await setBehaviour(fx, F, 'cas', 'conflict', { remaining: 2 });
      // The acknowledgement commits before the supervisor books the outcome: wait for both.
      await waitForState(
        fx,
        runtime,
        [F],
        async () => (await intentOf(fx, F, 'cas'))?.handledGeneration === 1 && partitionOf(runtime, F).backoff.get('cas') === undefined,
        20_000,
      );
      const conflicts = logs.filter((l) => l.msg === 'progress conflict; re-dispatch after a short delay' && l.scope === 'cas');
      assert.equal(conflicts.length, 2);
      for (const c of conflicts) {
        assert.ok((c.delayMs as number) <= 100, `the fixed conflict delay (0.1 s), not the failure backoff: ${c.delayMs} ms`);
        assert.equal(c.consecutiveFailures, 1, 'a conflict does not add a failure');
      }
      assert.deepEqual(statsOf(runtime, F).failures, { failed: 1 }, 'conflicts are not failures');
      // (SQLite's "URL" is the file path, which the start-up record names on purpose.)
      if (backend === 'mysql') for (const line of logs) assert.ok(!JSON.stringify(line).includes(fx.url), 'no connection string in any log record');
    });

    test("a retry's failure record names the original trigger and the next attempt", async () => {
      await setBehaviour(fx, F, 'twice', 'fail', { remaining: 2 });
      await fx.store.markDirty(bindingOf(F), 'twice');
      await runtime.trigger(F, 'twice');
      const records = (await waitFor(() => {
        const list = logs.filter((l) => l.msg === 'scope invocation failed' && l.scope === 'twice');
        return list.length === 2 ? list : undefined;
      }, 20_000)) as Array<Record<string, unknown>>;
      assert.deepEqual(
        records.map((r) => [r.trigger, r.retry, r.attempt]),
        [
          ['request', false, 1],
          ['request', true, 2],
        ],
      );
      assert.ok((records[1].retryInMs as number) > 2000, 'capped at the 3 s maximum, still a real backoff');
    });

    if (backend === 'mysql') {
      test('lost leadership is not a failure: the worker is terminated, nothing enters backoff, the new term recovers the request', async () => {
        await setBehaviour(fx, F, 'lead', 'gate');
        const before = statsOf(runtime, F);
        const generation = runtime.supervisors[0].term!.supervisorGeneration;
        await runtime.trigger(F, 'lead');
        const [run] = (await waitFor(async () => {
          const list = await runs(fx, F, 'lead');
          return list.length === 1 ? list : undefined;
        }, 20_000)) as [RunRow];
        await fx.store.invalidateTerm('global'); // an administrator (or a takeover) ends the term
        await waitFor(() => !isAlive(run.pid), 15_000);
        await waitFor(() => (runtime.supervisors[0].term?.supervisorGeneration ?? 0) > generation, 15_000);
        await openGate(fx, F, 'lead');
        await waitForState(fx, runtime, [F], async () => (await intentOf(fx, F, 'lead'))?.handledGeneration === 1 && statsOf(runtime, F).running === 0, 20_000);
        const stats = statsOf(runtime, F);
        assert.deepEqual(stats.failures, before.failures, 'no failure counted for the lost term');
        assert.equal(stats.timeouts, before.timeouts);
        assert.equal(partitionOf(runtime, F).backoff.get('lead'), undefined, 'no backoff entry');
        assert.equal(logs.filter((l) => l.msg === 'scope invocation failed' && l.scope === 'lead').length, 0);
      });
    }
  });
}

describe('[sqlite] a request notified while a discovery page is read forces another pass', () => {
  let fx: BackendFixture;
  let runtime: Runtime;
  let inject: (() => Promise<void>) | null = null;

  before(async () => {
    fx = await createBackend('sqlite');
    await createFixtureTables(fx);
    runtime = await startRuntime(fx, [testFamily(F, { maxWorkers: 1 })]);
    // The runtime's own discovery read: once armed, the page is read first and the request is
    // accepted (in another connection) and notified before the page is returned, so the page
    // cannot contain it.
    const store = runtime.store as unknown as { listOwedRequests: (...args: unknown[]) => Promise<unknown> };
    const original = store.listOwedRequests.bind(runtime.store);
    store.listOwedRequests = async (...args: unknown[]) => {
      const page = await original(...args);
      const hook = inject;
      inject = null;
      if (hook) await hook();
      return page;
    };
  });
  after(async () => {
    await runtime?.stop();
    await fx?.cleanup();
  });

  test('the request accepted during the read is dispatched (SQLite does not poll)', async () => {
    await runtime.trigger(F, 'first');
    await waitFor(async () => (await intentOf(fx, F, 'first'))?.handledGeneration === 1 && (await runs(fx, F, 'first'))[0]?.endedMs !== null, 20_000);
    let injected = false;
    inject = async () => {
      // Accepted through the runtime's own connection: no foreign commit that would wake it again.
      await runtime.store.acceptRequest(bindingOf(F), 'during');
      runtime.notifyRequest(F);
      injected = true;
    };
    runtime.notifyRequest(F); // a discovery pass over nothing new; the request arrives during its read
    await waitFor(() => injected, 10_000);
    await waitFor(async () => (await intentOf(fx, F, 'during'))?.handledGeneration === 1, 10_000);
  });
});
