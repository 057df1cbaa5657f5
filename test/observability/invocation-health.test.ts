// RFC 8, 12: a family whose every invocation keeps failing is degraded (readiness says so, not
// `leader`), while another family stays `leader`; its first acknowledged invocation makes it
// healthy again. Real worker processes on both backends.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import type { ObservabilityServer } from '../../src/observability/server.ts';
import { FAILING_STREAK_DEGRADES } from '../../src/runtime/invocation-health.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { createFixtureTables, intentOf, setBehaviour, startRuntime, statsOf, testFamily } from '../fixtures/runtime-harness.ts';
import { readyz, startEndpoint } from './helpers.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] family health while every invocation fails`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;
    let server: ObservabilityServer;

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      await setBehaviour(fx, 'ih-bad', '*', 'fail');
      runtime = await startRuntime(fx, [testFamily('ih-bad', { maxWorkers: 2 }), testFamily('ih-good', { maxWorkers: 1 })]);
      server = await startEndpoint(runtime);
    });
    after(async () => {
      await server?.stop();
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('degraded after consecutive failures with no success; healthy again at the first acknowledgement', async () => {
      for (const s of ['b1', 'b2']) await runtime.trigger('ih-bad', s);
      await runtime.trigger('ih-good', 'g1');
      await waitFor(() => (statsOf(runtime, 'ih-bad').failures.failed ?? 0) >= FAILING_STREAK_DEGRADES, 20_000);
      assert.equal(statsOf(runtime, 'ih-bad').health, 'degraded');
      assert.match(String(statsOf(runtime, 'ih-bad').lastError), /invocations failed in a row/);
      const { doc } = await readyz(server);
      const aps = doc.artifact_processing_supervisor;
      assert.equal(aps.families['ih-bad'].status, 'degraded', JSON.stringify(doc));
      assert.equal(aps.families['ih-good'].status, 'leader');
      assert.equal(aps.status, 'partially_degraded');

      // The processor recovers: the next retry is acknowledged and the family is healthy again.
      await setBehaviour(fx, 'ih-bad', '*', 'ok');
      await waitFor(async () => (await intentOf(fx, 'ih-bad', 'b1'))?.handledGeneration === 1, 20_000);
      await waitFor(() => statsOf(runtime, 'ih-bad').health === 'ok', 5_000);
      assert.equal((await readyz(server)).doc.artifact_processing_supervisor.families['ih-bad'].status, 'leader');
    });
  });
}
