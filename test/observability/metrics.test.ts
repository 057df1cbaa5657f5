// RFC 12: per-family metrics on GET /metrics (prom-client text format), labelled by family only
// (failures also by a bounded reason, term metrics by supervisor key); scope, worker, holder
// and request ids never appear. Real runtimes on SQLite and MariaDB, processors in real workers.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import type { ObservabilityServer } from '../../src/observability/server.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { createFixtureTables, intentOf, setBehaviour, startRuntime, statsOf, testFamily, waitForState } from '../fixtures/runtime-harness.ts';
import { get, samples, startEndpoint, value } from './helpers.ts';

const FAMILIES = ['ob-alpha', 'ob-beta'];
const ALLOWED_LABELS = new Set(['family', 'reason', 'supervisor_key', 'le']);

for (const backend of BACKENDS) {
  describe(`[${backend}] observability: /metrics per family`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;
    let server: ObservabilityServer;
    const tag = crypto.randomBytes(4).toString('hex');
    const scopes = FAMILIES.flatMap((f) => [0, 1, 2].map((i) => [f, `scope-${tag}-${f}-${i}`] as const));
    const failing = `scope-${tag}-fails-once`;

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      await setBehaviour(fx, 'ob-beta', failing, 'fail', { remaining: 1 });
      runtime = await startRuntime(
        fx,
        FAMILIES.map((f) => testFamily(f, { maxWorkers: 2 })),
      );
      server = await startEndpoint(runtime);
    });
    after(async () => {
      await server?.stop();
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('binds to the loopback ephemeral port it reports; /healthz answers', async () => {
      assert.equal(server.address.host, '127.0.0.1');
      assert.ok(server.address.port > 0);
      const h = await get(server, '/healthz');
      assert.equal(h.status, 200);
      assert.equal((await get(server, '/nope')).status, 404);
    });

    test('series per family after processing scopes; no scope id anywhere in the body', async () => {
      for (const [family, scope] of scopes) await runtime.trigger(family, scope);
      await runtime.trigger('ob-beta', failing);
      await waitForState(
        fx,
        runtime,
        FAMILIES,
        async () => {
          for (const [family, scope] of [...scopes, ['ob-beta', failing] as const]) {
            if ((await intentOf(fx, family, scope))?.handledGeneration !== 1) return false;
          }
          // The acknowledgement commits before the partition releases the worker's budget.
          return FAMILIES.every((f) => statsOf(runtime, f).running === 0 && statsOf(runtime, f).ready === 0);
        },
        30_000,
      );
      assert.ok((statsOf(runtime, 'ob-beta').failures && Object.values(statsOf(runtime, 'ob-beta').failures).reduce((a, b) => a + b, 0)) >= 1);

      const res = await get(server, '/metrics');
      assert.equal(res.status, 200);
      assert.match(res.type ?? '', /text\/plain/);
      const body = res.body;
      for (const f of FAMILIES) {
        for (const name of ['budget_available', 'budget_used', 'ready', 'retry_wait', 'owed_requests', 'discovery_latency_seconds']) {
          assert.notEqual(value(body, `artifact_processing_${name}`, { family: f }), undefined, `artifact_processing_${name}{family="${f}"} missing:\n${body}`);
        }
        assert.equal(value(body, 'artifact_processing_budget_available', { family: f }), 2);
        assert.equal(value(body, 'artifact_processing_budget_used', { family: f }), 0);
        assert.equal(value(body, 'artifact_processing_owed_requests', { family: f }), 0, 'everything was confirmed');
        assert.ok((value(body, 'artifact_processing_invocation_duration_seconds_count', { family: f }) ?? 0) >= 3);
        assert.ok((value(body, 'artifact_processing_invocations_total', { family: f }) ?? 0) >= 3);
        assert.notEqual(value(body, 'artifact_processing_timeouts_total', { family: f }), undefined);
      }
      const failures = samples(body, 'artifact_processing_failures_total').filter((s) => s.labels.family === 'ob-beta');
      assert.ok(failures.length >= 1 && failures.every((s) => typeof s.labels.reason === 'string') && failures.reduce((a, s) => a + s.value, 0) >= 1, body);
      assert.equal(value(body, 'artifact_processing_term_changes_total', { supervisor_key: 'global' }), 1);
      assert.equal(value(body, 'artifact_processing_renewal_failures_total', { supervisor_key: 'global' }), 0);

      // Bounded labels only, and no unbounded identifier anywhere in the text.
      for (const line of body.split('\n').filter((l) => l.startsWith('artifact_processing_'))) {
        for (const m of line.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) assert.ok(ALLOWED_LABELS.has(m[1]), `label ${m[1]} in ${line}`);
      }
      assert.ok(!body.includes(tag), 'a scope id appears in /metrics');
      assert.ok(!body.includes(runtime.holderId), 'the holder id appears in /metrics');
      assert.ok(!/ob-(alpha|beta)-\d+/.test(body), 'a worker id appears in /metrics');

      // Counters stay monotonic across scrapes.
      const again = (await get(server, '/metrics')).body;
      assert.ok(
        (value(again, 'artifact_processing_invocations_total', { family: 'ob-alpha' }) ?? 0) >=
          (value(body, 'artifact_processing_invocations_total', { family: 'ob-alpha' }) ?? 0),
      );
    });

    if (backend === 'mysql') {
      test('a failed renewal followed by a good one before the next scrape is still counted', async () => {
        const store = runtime.store as unknown as { renewTerm: (...args: unknown[]) => Promise<unknown> };
        const original = store.renewTerm;
        let failures = 0;
        store.renewTerm = async function (this: unknown, ...args: unknown[]) {
          if (failures === 0) {
            failures += 1;
            throw new Error('transient network error (injected)');
          }
          return original.apply(this, args);
        };
        try {
          await waitFor(() => {
            const s = runtime.status().supervisors.find((x) => x.supervisorKey === 'global');
            // The failure suspended dispatch (RFC 8); the good renewal of the same term resumed it.
            return s !== undefined && s.renewalFailuresTotal === 1 && s.renewalFailures === 0 && s.state === 'leader' && !s.dispatchSuspended;
          }, 10_000);
        } finally {
          store.renewTerm = original;
        }
        const body = (await get(server, '/metrics')).body;
        assert.equal(
          value(body, 'artifact_processing_renewal_failures_total', { supervisor_key: 'global' }),
          1,
          'the consecutive count was reset by the good renewal; the counter must not lose the failure',
        );
        assert.equal(
          value(body, 'artifact_processing_term_changes_total', { supervisor_key: 'global' }),
          1,
          'a transient failure within the TTL does not change the term',
        );
      });
    }
  });
}
