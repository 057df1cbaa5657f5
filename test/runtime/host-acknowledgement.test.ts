// The supervisor commits a processor's ctx.acknowledge() (an acknowledgement without business
// writes) itself, batched (src/runtime/ack-batcher.ts, pc_aps_acknowledge_batch), after the worker
// returned normally; real worker processes on both backends. The worker's budget slot is free
// while the commit is in flight, but the key stays busy: it never runs twice at once, nothing is
// reported done before the commit, and a processor that throws after ctx.acknowledge() leaves the
// request owed (it is a failure and is retried).
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  FIXTURES_DIR,
  createFixtureTables,
  intentOf,
  maxConcurrency,
  runs,
  setBehaviour,
  startRuntime,
  statsOf,
  testFamily,
} from '../fixtures/runtime-harness.ts';

const ACKNOWLEDGING = path.join(FIXTURES_DIR, 'processors', 'acknowledging.ts');

for (const backend of BACKENDS) {
  describe(`[${backend}] acknowledgements committed by the supervisor (group commit)`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;
    const F = 'fx-hostack';
    const G = 'fx-hostack-throw';

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      await setBehaviour(fx, F, '*', 'ack');
      await setBehaviour(fx, G, '*', 'ack_then_throw');
      runtime = await startRuntime(
        fx,
        [testFamily(F, { maxWorkers: 3, processorModule: ACKNOWLEDGING }), testFamily(G, { maxWorkers: 1, processorModule: ACKNOWLEDGING })],
        {
          env: {
            POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_RETRY_BASE_SECONDS: '600',
            POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_RETRY_MAX_SECONDS: '600',
          },
        },
      );
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('every acknowledged invocation is committed: handled and clean advance, each key ran once per request', async () => {
      const scopes = Array.from({ length: 30 }, (_, i) => `s${i}`);
      for (const s of scopes) {
        await runtime.markDirty(F, s);
        await runtime.trigger(F, s);
      }
      await waitFor(async () => {
        for (const s of scopes) if ((await intentOf(fx, F, s))!.handledGeneration !== 1) return false;
        return true;
      }, 30_000);
      for (const s of scopes) {
        const intent = (await intentOf(fx, F, s))!;
        assert.equal(intent.cleanGeneration, 1, `${s}: the clean confirmation of ctx.acknowledge({ confirmClean }) is committed`);
      }
      const all = await runs(fx, F);
      assert.equal(all.length, scopes.length, 'one invocation per key');
      assert.ok(maxConcurrency(all) <= 3, 'never beyond the budget');
      assert.equal(statsOf(runtime, F).failures.not_acknowledged ?? 0, 0);
    });

    test('a key whose acknowledgement is still being committed is not dispatched again meanwhile', async () => {
      // Many triggers of one key while it runs: at most one successor, never two invocations at once.
      await runtime.trigger(F, 'hot');
      for (let i = 0; i < 20; i++) await runtime.trigger(F, 'hot');
      await waitFor(async () => {
        const intent = await intentOf(fx, F, 'hot');
        return intent!.handledGeneration === intent!.requestedGeneration;
      }, 30_000);
      const hot = await runs(fx, F, 'hot');
      assert.ok(hot.length >= 1 && hot.length <= 21, `requests merge (never more runs than triggers), got ${hot.length}`);
      for (let i = 1; i < hot.length; i++) assert.ok(hot[i].startedMs >= hot[i - 1].endedMs!, 'single-flight per key');
    });

    test('a processor that throws after ctx.acknowledge() leaves its request owed and is a failure', async () => {
      await runtime.trigger(G, 'x');
      await waitFor(async () => (statsOf(runtime, G).failures.failed ?? 0) >= 1, 30_000);
      const intent = (await intentOf(fx, G, 'x'))!;
      assert.equal(intent.handledGeneration, 0, 'nothing acknowledged');
      assert.equal(intent.requestedGeneration, 1, 'the request stays owed (retried after the backoff)');
      assert.equal(statsOf(runtime, G).retryWait, 1);
    });
  });
}
