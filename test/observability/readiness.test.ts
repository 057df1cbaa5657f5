// RFC 12: the readiness document keeps the overall artifact_processing_supervisor status and adds
// one status per family. A failing pending-work provider while the lease is valid degrades only
// its family (overall: partially degraded) and the other family keeps being scheduled; a standby
// candidate is healthy; the api role reports its backlog and whether a background leader is alive
// from persisted facts; durable task worker readiness comes from the task readiness facts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FamilyRegistration } from '../../src/registry/registration.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import type { ObservabilityServer } from '../../src/observability/server.ts';
import { countOwedRequests } from '../../src/observability/facts.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { P, bindingOf, createFixtureTables, intentOf, startRuntime, statsOf, testFamily, waitForState } from '../fixtures/runtime-harness.ts';
import { get, readyz, startEndpoint, value } from './helpers.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] observability: a failing provider degrades only its family`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;
    let server: ObservabilityServer;
    let providerCalls = 0;

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      const failing: FamilyRegistration = {
        ...testFamily('ob-bad', { maxWorkers: 1, schedule: { kind: 'interval', seconds: 1 } }),
        pendingWork: {
          remarkDirty: async () => {
            providerCalls += 1;
            throw new Error('provider backend unreachable');
          },
        },
      };
      runtime = await startRuntime(fx, [failing, testFamily('ob-good', { maxWorkers: 2, schedule: { kind: 'interval', seconds: 1 } })]);
      server = await startEndpoint(runtime);
    });
    after(async () => {
      await server?.stop();
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('ob-bad degraded, overall partially degraded (still ready), ob-good processed', async () => {
      await waitFor(() => providerCalls >= 1 && statsOf(runtime, 'ob-bad').health === 'degraded', 10_000);
      const { status, doc } = await readyz(server);
      assert.equal(status, 200, JSON.stringify(doc));
      assert.equal(doc.ready, true);
      const aps = doc.artifact_processing_supervisor;
      assert.equal(aps.status, 'partially_degraded', JSON.stringify(doc));
      assert.equal(aps.families['ob-bad'].status, 'degraded');
      assert.match(aps.families['ob-bad'].lastError, /provider/);
      assert.equal(aps.families['ob-good'].status, 'leader');
      assert.deepEqual(aps.supervisors, [{ supervisorKey: 'global', state: 'leader' }]);
      assert.equal(doc.durable_tasks.liveWorkers, 0);

      // The other family keeps being scheduled: explicit requests and ordinary (scanned) work.
      await runtime.trigger('ob-good', 'g-req');
      await runtime.markDirty('ob-good', 'g-dirty');
      await waitForState(
        fx,
        runtime,
        ['ob-good', 'ob-bad'],
        async () => {
          const req = await intentOf(fx, 'ob-good', 'g-req');
          const dirty = await intentOf(fx, 'ob-good', 'g-dirty');
          return req?.handledGeneration === 1 && dirty !== null && dirty.cleanGeneration >= dirty.dirtyGeneration;
        },
        20_000,
      );
      const later = await readyz(server);
      assert.equal(later.doc.artifact_processing_supervisor.families['ob-bad'].status, 'degraded');
      assert.equal(later.doc.artifact_processing_supervisor.families['ob-good'].status, 'leader');
      const metrics = (await get(server, '/metrics')).body;
      assert.equal(value(metrics, 'artifact_processing_degraded', { family: 'ob-bad' }), 1);
      assert.equal(value(metrics, 'artifact_processing_degraded', { family: 'ob-good' }), 0);
    });
  });
}

describe('[mysql] observability: a standby candidate is healthy', () => {
  let fx: BackendFixture;
  let leader: Runtime;
  let standby: Runtime;
  let leaderServer: ObservabilityServer;
  let standbyServer: ObservabilityServer;
  const families = () => [testFamily('ob-alpha'), testFamily('ob-beta')];

  before(async () => {
    fx = await createBackend('mysql');
    await createFixtureTables(fx);
    leader = await startRuntime(fx, families());
    standby = await startRuntime(fx, families());
    leaderServer = await startEndpoint(leader);
    standbyServer = await startEndpoint(standby);
  });
  after(async () => {
    await standbyServer?.stop();
    await leaderServer?.stop();
    await standby?.stop();
    await leader?.stop();
    await fx?.cleanup();
  });

  test('second runtime for the same key: standby, ready; the first: leader', async () => {
    const s = await readyz(standbyServer);
    assert.equal(s.status, 200, JSON.stringify(s.doc));
    assert.equal(s.doc.ready, true);
    assert.equal(s.doc.artifact_processing_supervisor.status, 'standby');
    assert.deepEqual(s.doc.artifact_processing_supervisor.families, { 'ob-alpha': { status: 'standby' }, 'ob-beta': { status: 'standby' } });
    const l = await readyz(leaderServer);
    assert.equal(l.status, 200);
    assert.equal(l.doc.artifact_processing_supervisor.status, 'ok');
    assert.deepEqual(l.doc.artifact_processing_supervisor.families, { 'ob-alpha': { status: 'leader' }, 'ob-beta': { status: 'leader' } });
    const m = (await get(standbyServer, '/metrics')).body;
    assert.equal(value(m, 'artifact_processing_supervisor_leader', { supervisor_key: 'global' }), 0);
    assert.equal(value((await get(leaderServer, '/metrics')).body, 'artifact_processing_supervisor_leader', { supervisor_key: 'global' }), 1);
  });
});

describe('[mysql] observability: the api role reports backlog and whether a background leader is alive', () => {
  let fx: BackendFixture;
  let api: Runtime;
  let background: Runtime | null = null;
  let server: ObservabilityServer;
  const families = () => [testFamily('ob-alpha'), testFamily('ob-beta')];

  before(async () => {
    fx = await createBackend('mysql');
    await createFixtureTables(fx);
    api = await startRuntime(fx, families(), { env: { [`${P}ARTIFACT_PROCESSING_ROLE`]: 'api' } });
    server = await startEndpoint(api);
  });
  after(async () => {
    await server?.stop();
    await background?.stop();
    await api?.stop();
    await fx?.cleanup();
  });

  test('backlog owed, no leader; a background process starts: leader alive, backlog drains', async () => {
    for (const s of ['a1', 'a2', 'a3']) await api.trigger('ob-alpha', s);
    await api.trigger('ob-beta', 'b1');
    let r = await readyz(server);
    assert.equal(r.status, 200, JSON.stringify(r.doc));
    assert.equal(r.doc.artifact_processing_supervisor.role, 'api');
    assert.equal(r.doc.artifact_processing_supervisor.status, 'ok');
    assert.deepEqual(r.doc.backlog.families, { 'ob-alpha': { owed: 3, capped: false }, 'ob-beta': { owed: 1, capped: false } });
    assert.equal(r.doc.backlog.backgroundLeaderAlive, false, 'accepting intents does not prove processing runs');
    assert.equal(r.doc.durable_tasks.liveWorkers, 0);
    const metrics = (await get(server, '/metrics')).body;
    assert.equal(value(metrics, 'artifact_processing_owed_requests', { family: 'ob-alpha' }), 3);
    assert.equal(value(metrics, 'artifact_processing_owed_requests', { family: 'ob-beta' }), 1);

    // Bounded count: stops at the cap.
    assert.deepEqual(await countOwedRequests(api, bindingOf('ob-alpha'), 2, 1000), { owed: 2, capped: true });
    assert.deepEqual(await countOwedRequests(api, bindingOf('ob-alpha'), 3, 1000), { owed: 3, capped: false });
    assert.deepEqual(await countOwedRequests(api, bindingOf('ob-alpha'), 10, 1), { owed: 3, capped: false });

    // Durable task worker readiness is a persisted fact too.
    await new TaskStore(fx.store as BaseStore).publishReadiness('ob-task-worker', 10_000);
    r = await readyz(server);
    assert.equal(r.doc.durable_tasks.liveWorkers, 1);

    background = await startRuntime(fx, families(), { env: { [`${P}ARTIFACT_PROCESSING_ROLE`]: 'background' } });
    await waitFor(async () => (await readyz(server)).doc.backlog.backgroundLeaderAlive === true, 10_000);
    await waitFor(async () => {
      const d = (await readyz(server)).doc;
      return d.backlog.families['ob-alpha'].owed === 0 && d.backlog.families['ob-beta'].owed === 0;
    }, 30_000);
  });
});
