// Process roles on MariaDB (RFC section 8 "角色与恢复"): a process with --role api builds no
// supervisor, never competes for the lease and never dispatches; intents accepted through
// `apsup trigger` while only the api process runs stay owed (accepted is not processed), and a
// background candidate started later takes the term and processes them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { ALPHA_BINDING, BETA_BINDING, FAMILIES_MODULE_PATH } from '../fixtures/failover/families.ts';
import { RuntimeProcess, killEverything, makeFixtureDir, runCli } from '../fixtures/failover/harness.ts';
import { EFFECTS_DDL } from '../fixtures/failover/protocol.ts';

describe('role api accepts intents and never dispatches; a background candidate processes them (MariaDB)', () => {
  let fx: BackendFixture;
  let dir: string;

  before(async () => {
    fx = await createBackend('mysql');
    await fx.query(EFFECTS_DDL);
    dir = makeFixtureDir('roles');
  });

  after(async () => {
    killEverything();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('api process + apsup trigger: accepted and owed; background candidate: processed', async () => {
    const api = new RuntimeProcess('api', { url: fx.url, fixtureDir: dir, role: 'api' });
    const started = await api.waitForMsg('artifact processing supervisor starting');
    assert.equal(started.role, 'api');
    assert.deepEqual(started.supervisors, [], 'the api role builds no supervisor');
    const candidateId = String((await api.waitForMsg('candidate fingerprint registered')).candidateId);

    // `apsup trigger` accepts the request in one short transaction and reports accepted.
    const accepted: Array<Record<string, any>> = [];
    for (const [family, scope] of [
      ['fo-alpha', 'api-1'],
      ['fo-beta', 'api-2'],
      ['fo-alpha', 'api-1'],
    ]) {
      const out = await runCli(['trigger', family, scope, '--families', FAMILIES_MODULE_PATH], fx.url, dir);
      assert.equal(out.code, 0, out.stderr);
      const line = JSON.parse(out.stdout.trim().split('\n').pop()!);
      assert.equal(line.status, 'accepted');
      accepted.push(line);
    }
    assert.equal(accepted[0].requestedGeneration, 1);
    assert.equal(accepted[2].requestedGeneration, 2, 'a second trigger advances the requested generation');

    // While only the api process runs: nothing competes for a lease, nothing is processed. How
    // long to look is the api process's own: until its candidate row was refreshed twice (two
    // renewal periods of its loop, in which a would-be leader would have competed), not a pause.
    const expiries = new Set<string>();
    await waitFor(
      async () => {
        const leases = await fx.query('SELECT supervisor_key FROM pc_artifact_processing_leases');
        assert.deepEqual(leases, [], 'the api role never takes or even competes for a term');
        const [row] = await fx.query(
          "SELECT DATE_FORMAT(MAX(expires_at), '%Y-%m-%d %H:%i:%s.%f') AS expires FROM pc_aps_candidate_fingerprints WHERE candidate_id = ?",
          [candidateId],
        );
        expiries.add(String(row?.expires));
        return expiries.size >= 3; // the registration's expiry and two refreshes
      },
      15_000,
      50,
    );
    assert.deepEqual(await fx.query('SELECT supervisor_key FROM pc_artifact_processing_leases'), []);
    assert.deepEqual(await fx.query('SELECT * FROM fo_effects'), []);
    for (const [binding, scope] of [
      [ALPHA_BINDING, 'api-1'],
      [BETA_BINDING, 'api-2'],
    ]) {
      const i = await fx.store.readIntent(binding, scope);
      assert.ok(i && i.requestedGeneration > i.handledGeneration && i.handledGeneration === 0, `${scope} is owed`);
    }
    assert.ok(
      api.alive,
      `the api process keeps running (exit ${JSON.stringify(api.exit)}; stderr ${api.stderr}; lines ${JSON.stringify(api.lines.slice(-5))})`,
    );
    assert.equal(api.lines.filter((l) => l.name === 'apsup-worker').length, 0, 'no worker ever ran under the api process');
    assert.equal(api.own(/term|standby|scope invocation/).length, 0, JSON.stringify(api.own()));

    // A background candidate takes the term and processes what the api accepted.
    const bg = new RuntimeProcess('background', { url: fx.url, fixtureDir: dir, role: 'background' });
    const acquired = await bg.waitForMsg('term acquired; recovering from persisted state');
    for (const [binding, scope] of [
      [ALPHA_BINDING, 'api-1'],
      [BETA_BINDING, 'api-2'],
    ]) {
      await waitFor(async () => {
        const i = await fx.store.readIntent(binding, scope);
        return i && i.handledGeneration === i.requestedGeneration;
      }, 15_000);
    }
    const rows = await fx.query('SELECT scope_id, holder_id, claimed_generation FROM fo_effects ORDER BY scope_id');
    assert.deepEqual(
      rows.map((r) => [r.scope_id, r.holder_id, Number(r.claimed_generation)]),
      [
        ['api-1', acquired.holderId, 2], // both triggers merged into one invocation carrying the latest G
        ['api-2', acquired.holderId, 1],
      ],
    );
    const lease = await fx.store.readLease('global');
    assert.equal(lease.holderId, acquired.holderId);
    assert.equal(api.own(/term|standby/).length, 0, 'the api process stayed out of the election');

    // A trigger while both run is processed by the background candidate too.
    const out = await runCli(['trigger', 'fo-beta', 'api-3', '--families', FAMILIES_MODULE_PATH], fx.url, dir);
    assert.equal(out.code, 0, out.stderr);
    await bg.waitForMsg('scope invocation acknowledged', { scope: 'api-3' });
    assert.equal((await bg.stop()).code, 0);
    assert.equal((await api.stop()).code, 0);
    assert.equal(api.lines.filter((l) => l.name === 'apsup-worker').length, 0);
  });
});
