// The console mounted on a running host (as `apsup run` mounts it): the family's budget in use
// and health, the in-memory backoff of a failing scope with its reason and message (RFC 7), and
// the latest invocations with outcome and duration; a trigger from the console goes through the
// runtime and is invoked.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConsoleServer } from '../../src/console/server.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { parseTaskConfig } from '../../src/tasks/config.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { P, createFixtureTables, setBehaviour, startRuntime, testFamily } from '../fixtures/runtime-harness.ts';
import { TASKS_MODULE, TOKEN, api } from './harness.ts';

const F = 'cx-live';

for (const backend of BACKENDS)
  describe(`[${backend}] console mounted on a running host`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;
    let server: ConsoleServer;

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      // A long backoff: the failing scope stays in retry-wait while the test reads it.
      runtime = await startRuntime(fx, [testFamily(F, { maxWorkers: 2 })], {
        env: { [`${P}ARTIFACT_PROCESSING_RETRY_BASE_SECONDS`]: '600', [`${P}ARTIFACT_PROCESSING_RETRY_MAX_SECONDS`]: '600' },
      });
      const env = { [`${P}DATABASE_URL`]: fx.url, [`${P}TASKS_MODULE`]: TASKS_MODULE };
      server = await ConsoleServer.start({
        address: { host: '127.0.0.1', port: 0 },
        store: runtime.store,
        config: runtime.config,
        taskConfig: parseTaskConfig(env),
        token: TOKEN,
        runtime,
        env,
      });
    });

    after(async () => {
      await server?.stop();
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('backoff, invocations and budget from the host', async () => {
      await setBehaviour(fx, F, 'bad', 'fail');
      await runtime.trigger(F, 'bad');
      await runtime.trigger(F, 'good');
      const family = (await waitFor(async () => {
        const { body } = await api(server, `/api/families/${F}`);
        const ok = body.invocations.some((r: any) => r.scopeId === 'good' && r.status === 'ok');
        return ok && body.backoff.length === 1 ? body : null;
      })) as Record<string, any>;
      assert.equal(family.live, true);
      const [b] = family.backoff;
      assert.equal(b.scopeId, 'bad');
      assert.equal(b.consecutiveFailures, 1);
      assert.match(b.message, /scripted failure/);
      assert.ok(new Date(b.nextRetryAt).getTime() > Date.now() + 60_000, 'the retry is the configured backoff away');
      assert.equal(b.intent.requestedGeneration, 1);
      assert.equal(b.intent.handledGeneration, 0);
      const failed = family.invocations.find((r: any) => r.scopeId === 'bad');
      assert.equal(failed.status, 'failed');
      assert.match(failed.error, /scripted failure/);
      assert.ok(failed.durationMs >= 0);

      const { body: overview } = await api(server, '/api/overview');
      const f = overview.families.find((x: any) => x.family === F);
      assert.equal(f.live.budget, 2);
      assert.equal(f.live.retryWait, 1);
      assert.equal(overview.host.role, 'all');
      const scope = await api(server, `/api/families/${F}/scopes/bad`);
      assert.equal(scope.body.backoff.consecutiveFailures, 1);
    });

    test('a trigger from the console is accepted through the runtime and invoked', async () => {
      const before = (await api(server, `/api/families/${F}/scopes/good`)).body.invocations.length;
      const res = await api(server, `/api/families/${F}/scopes/good/trigger`, { method: 'POST', token: TOKEN });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      await waitFor(async () => (await api(server, `/api/families/${F}/scopes/good`)).body.invocations.length > before);
      // The acknowledgement may commit just after the outcome is recorded (group commit).
      await waitFor(async () => (await fx.store.readIntent(runtime.config.families[0]!.registration.bindingName, 'good'))?.handledGeneration === 2);
    });
  });
