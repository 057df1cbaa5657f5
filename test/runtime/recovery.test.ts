// Acceptance A9 (RFC 12.9; sections 5, 6, 7) and shutdown (section 9), with real worker
// processes that crash, hang, fail half-way or forget to acknowledge. Each scope has an ordered
// input journal (fx_inputs); the scripted processor consumes it with a cursor CAS and records
// every consumption in fx_consumed, so a duplicate consumption would show there.
//
//   - commit, then crash before reporting: the persisted acknowledgement covers the generation;
//     nothing is consumed twice, and new input waits for a new request (not the old one's retry);
//   - crash before commit, timeout (process killed), partial legal commit then failure: retried,
//     and the retry continues from the business progress (each input consumed exactly once);
//   - returning without acknowledging: a protocol failure, retried, not counted as done;
//   - shutdown: running workers are terminated within the grace period, their requests stay
//     owed (requested > handled), the term is invalidated, and the next runtime recovers them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  P,
  appendInputs,
  consumed,
  createFixtureTables,
  waitForState,
  intentOf,
  isAlive,
  openGate,
  runs,
  setBehaviour,
  startRuntime,
  statsOf,
  testFamily,
} from '../fixtures/runtime-harness.ts';

const F = 'fx-rec';
const T = 'fx-slow';

for (const backend of BACKENDS) {
  describe(`[${backend}] A9 recovery from lost notifications, crashes, timeouts and partial commits`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;
    const cases: Record<string, string> = {
      'c-after': 'exit_after_commit',
      'c-before': 'exit_before_commit',
      'c-partial': 'partial_then_fail',
      'c-noack': 'no_ack',
    };

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      for (const [scope, mode] of Object.entries(cases)) await setBehaviour(fx, F, scope, mode, { remaining: 1 });
      await setBehaviour(fx, T, 'c-timeout', 'hang', { remaining: 1, ms: 120_000 });
      runtime = await startRuntime(
        fx,
        [
          testFamily(F, { maxWorkers: 4 }),
          // A separate family for the timeout: 3 s per invocation. The clock starts with the
          // worker (a cold worker's start-up counts), so the case below runs on a warm worker.
          testFamily(T, { maxWorkers: 1, timeoutSeconds: 3 }),
        ],
        { env: { [`${P}ARTIFACT_PROCESSING_RETRY_BASE_SECONDS`]: '0.1', [`${P}ARTIFACT_PROCESSING_RETRY_MAX_SECONDS`]: '0.5' } },
      );
      for (const scope of Object.keys(cases)) await appendInputs(runtime, F, scope, 2);
      await appendInputs(runtime, T, 'c-timeout', 2);
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('every case ends with its request handled and each input consumed exactly once', async () => {
      // Warm up the timeout family's worker process first.
      await runtime.trigger(T, 'warm-up');
      await waitForState(fx, runtime, [T], async () => (await intentOf(fx, T, 'warm-up'))!.handledGeneration === 1, 30_000);
      for (const scope of Object.keys(cases)) await runtime.trigger(F, scope);
      await runtime.trigger(T, 'c-timeout');
      const all = [...Object.keys(cases).map((s) => [F, s] as const), [T, 'c-timeout'] as const];
      await waitForState(
        fx,
        runtime,
        [F, T],
        async () => {
          for (const [family, scope] of all) {
            const i = await intentOf(fx, family, scope);
            if (!i || i.handledGeneration !== 1) return false;
          }
          return true;
        },
        45_000,
      );
      for (const [family, scope] of all) {
        const list = await consumed(fx, family, scope);
        assert.deepEqual(
          list.map((c) => c.seq),
          [1, 2],
          `${scope}: inputs consumed once each, in order`,
        );
        assert.ok(
          list.every((c) => c.generation === 1),
          `${scope}: under the claimed generation`,
        );
        const i = await intentOf(fx, family, scope);
        assert.equal(i!.cleanGeneration, i!.dirtyGeneration, `${scope}: clean once everything was consumed`);
      }
    });

    test('commit then crash: the persisted acknowledgement settles it; no second processor run, no duplicate', async () => {
      const list = await runs(fx, F, 'c-after');
      assert.equal(list.length, 1, 'the processor ran once: the acknowledgement covered the generation');
      assert.equal(list[0].mode, 'exit_after_commit');
      await waitFor(() => !isAlive(list[0].pid));
      assert.equal(statsOf(runtime, F).failures.crashed ?? 0, 1, 'only c-before counts as a crash');
      // New input after the crash is not consumed under the old, already acknowledged generation.
      await appendInputs(runtime, F, 'c-after', 1);
      await runtime.trigger(F, 'barrier');
      await waitFor(async () => (await intentOf(fx, F, 'barrier'))!.handledGeneration === 1, 20_000);
      assert.deepEqual(
        (await consumed(fx, F, 'c-after')).map((c) => c.seq),
        [1, 2],
      );
      const i = await intentOf(fx, F, 'c-after');
      assert.ok(i!.dirtyGeneration > i!.cleanGeneration, 'the new input waits as ordinary work');
      assert.equal(i!.requestedGeneration, 1);
      // A new request consumes it under the new generation.
      await runtime.trigger(F, 'c-after');
      await waitFor(async () => (await intentOf(fx, F, 'c-after'))!.handledGeneration === 2, 20_000);
      assert.deepEqual(
        (await consumed(fx, F, 'c-after')).map((c) => [c.seq, c.generation]),
        [
          [1, 1],
          [2, 1],
          [3, 2],
        ],
      );
    });

    test('crash before commit: retried, consumed by the retry only', async () => {
      const list = await runs(fx, F, 'c-before');
      assert.equal(list.length, 2);
      assert.equal(list[0].mode, 'exit_before_commit');
      assert.equal(list[0].endedMs, null, 'the first run died before recording its end');
      const tokens = new Set((await consumed(fx, F, 'c-before')).map((c) => c.runToken));
      assert.deepEqual([...tokens], [list[1].runToken]);
    });

    test('timeout: the hanging worker process is killed and the retry consumes the input', async () => {
      const list = await runs(fx, T, 'c-timeout');
      const hung = list.find((r) => r.mode === 'hang');
      assert.ok(hung, 'the hanging run was recorded');
      assert.equal(hung!.endedMs, null, 'it never finished');
      await waitFor(() => !isAlive(hung!.pid));
      assert.ok(statsOf(runtime, T).timeouts >= 1);
      assert.ok((statsOf(runtime, T).failures.timeout ?? 0) >= 1);
      const tokens = new Set((await consumed(fx, T, 'c-timeout')).map((c) => c.runToken));
      assert.equal(tokens.size, 1);
      assert.ok(!tokens.has(hung!.runToken), 'nothing was consumed by the killed run');
    });

    test('partial legal commit, then failure: the retry continues after the committed progress', async () => {
      const list = await runs(fx, F, 'c-partial');
      assert.equal(list.length, 2);
      assert.equal(list[0].outcome, 'threw');
      const rows = await consumed(fx, F, 'c-partial');
      assert.deepEqual(
        rows.map((c) => [c.seq, c.runToken]),
        [
          [1, list[0].runToken],
          [2, list[1].runToken],
        ],
      );
      assert.ok((statsOf(runtime, F).failures.failed ?? 0) >= 1);
    });

    test('returning without an acknowledgement is a protocol failure: retried, not counted as done', async () => {
      const list = await runs(fx, F, 'c-noack');
      assert.equal(list.length, 2);
      assert.equal(list[0].mode, 'no_ack');
      assert.equal(list[0].outcome, 'returned');
      assert.equal(statsOf(runtime, F).failures.not_acknowledged ?? 0, 1);
      const tokens = new Set((await consumed(fx, F, 'c-noack')).map((c) => c.runToken));
      assert.deepEqual([...tokens], [list[1].runToken]);
    });
  });

  describe(`[${backend}] shutdown terminates workers, keeps their requests owed, invalidates the term`, () => {
    let fx: BackendFixture;
    let runtime: Runtime | null = null;
    const S = 'fx-stop';

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      await setBehaviour(fx, S, '*', 'gate');
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('stop() within the grace period; requests stay owed; the lease has no holder; a new runtime recovers', async () => {
      runtime = await startRuntime(fx, [testFamily(S, { maxWorkers: 2 })]);
      await runtime.trigger(S, 's1');
      await runtime.trigger(S, 's2');
      await waitFor(async () => (await runs(fx, S)).length === 2, 20_000);
      const pids = (await runs(fx, S)).map((r) => r.pid);
      const generationBefore = (await fx.store.readLease('global')).supervisorGeneration;
      const started = Date.now();
      await runtime.stop();
      const took = Date.now() - started;
      runtime = null;
      assert.ok(took < 1000 + 2000, `stop took ${took} ms with a 1 s grace period`);
      for (const pid of pids) assert.equal(isAlive(pid), false, `worker ${pid} was terminated`);
      for (const s of ['s1', 's2']) {
        const i = await intentOf(fx, S, s);
        assert.equal(i!.requestedGeneration, 1);
        assert.equal(i!.handledGeneration, 0, `${s} stays owed`);
      }
      const lease = await fx.store.readLease('global');
      assert.equal(lease.holderId, null);
      assert.equal(lease.live, false);
      assert.ok(lease.supervisorGeneration > generationBefore, 'the term was invalidated (generation advanced)');

      // The next runtime recovers the owed requests from the database.
      await openGate(fx, S, 's1');
      await openGate(fx, S, 's2');
      runtime = await startRuntime(fx, [testFamily(S, { maxWorkers: 2 })]);
      await waitFor(async () => {
        for (const s of ['s1', 's2']) if ((await intentOf(fx, S, s))!.handledGeneration !== 1) return false;
        return true;
      }, 20_000);
    });
  });
}
