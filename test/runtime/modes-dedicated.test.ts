// Dedicated mode between real processes (RFC section 8: "dedicated 模式下每种已注册制品各有一个
// Supervisor，因此各有一条 artifact:<规范 Family 名称> Lease"). One runtime host in
// POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_SUPERVISOR_MODE=dedicated holds one lease per
// family and none for 'global'; each family is processed under its own key. On MariaDB, a lost
// (invalidated) lease of one family stops only that family's supervisor: its in-flight worker is
// terminated, it re-acquires with a higher generation and recovers the owed request, while the
// other family's supervisor keeps its term and its in-flight worker commits.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { ALPHA_BINDING, BETA_BINDING } from '../fixtures/failover/families.ts';
import { RuntimeProcess, isAlive, killEverything, makeFixtureDir, trackPid, waitForJsonFile } from '../fixtures/failover/harness.ts';
import {
  EFFECTS_DDL,
  heldFile,
  holdFile,
  outcomeFile,
  readJson,
  releaseFile,
  writeJsonAtomic,
  type HeldRecord,
  type OutcomeRecord,
} from '../fixtures/failover/protocol.ts';

const ALPHA_KEY = 'artifact:fo-alpha';
const BETA_KEY = 'artifact:fo-beta';

for (const backend of BACKENDS) {
  describe(`dedicated mode on ${backend}: one lease per family, families independent`, () => {
    let fx: BackendFixture;
    let dir: string;
    let host: RuntimeProcess;

    before(async () => {
      fx = await createBackend(backend);
      await fx.query(EFFECTS_DDL);
      dir = makeFixtureDir(`dedicated-${backend}`);
    });

    after(async () => {
      killEverything();
      await fx?.cleanup();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    const owedCleared = (binding: string, scope: string) =>
      waitFor(async () => {
        const i = await fx.store.readIntent(binding, scope);
        return i !== null && i.handledGeneration === i.requestedGeneration && i.handledGeneration > 0;
      }, 15_000);
    const leaseRows = () =>
      fx.query('SELECT supervisor_key, holder_id, supervisor_generation, expires_at FROM pc_artifact_processing_leases ORDER BY supervisor_key');

    test('one supervisor and lease per family (artifact:<family>), none for global; each family is processed under its own key', async () => {
      host = new RuntimeProcess(`dedicated-${backend}`, { url: fx.url, fixtureDir: dir, mode: 'dedicated' });
      const starting = await host.waitForMsg('artifact processing supervisor starting');
      assert.equal(starting.mode, 'dedicated');
      assert.deepEqual([...starting.supervisors].sort(), [ALPHA_KEY, BETA_KEY]);
      await host.waitForMsg('supervisor started', { supervisorKey: ALPHA_KEY, state: 'leader' });
      await host.waitForMsg('supervisor started', { supervisorKey: BETA_KEY, state: 'leader' });

      const rows = await leaseRows();
      assert.deepEqual(
        rows.map((r) => r.supervisor_key),
        [ALPHA_KEY, BETA_KEY],
        'no global lease in dedicated mode',
      );
      for (const r of rows) {
        assert.equal(r.holder_id, starting.holderId, 'both supervisors live in this one host');
        if (backend === 'sqlite') assert.equal(r.expires_at, null, 'SQLite terms are permanent (no expiry)');
        else assert.notEqual(r.expires_at, null, 'MySQL terms are leases');
      }

      await fx.store.acceptRequest(ALPHA_BINDING, 'a1');
      await fx.store.acceptRequest(BETA_BINDING, 'b1');
      await fx.store.markDirty(BETA_BINDING, 'b1'); // ordinary work rides along and is confirmed clean
      await owedCleared(ALPHA_BINDING, 'a1');
      await owedCleared(BETA_BINDING, 'b1');
      const effects = await fx.query('SELECT family, scope_id, supervisor_key FROM fo_effects ORDER BY scope_id');
      assert.deepEqual(
        effects.map((r) => [r.family, r.scope_id, r.supervisor_key]),
        [
          ['fo-alpha', 'a1', ALPHA_KEY],
          ['fo-beta', 'b1', BETA_KEY],
        ],
      );
      assert.equal((await fx.query("SELECT COUNT(*) AS n FROM pc_artifact_processing_leases WHERE supervisor_key = 'global'"))[0].n, 0);
      assert.equal(host.own(/term lost|failed/).length, 0);
    });

    if (backend === 'mysql') {
      test('an invalidated lease of one family stops only that family; it re-acquires with a higher generation; the other family is untouched', async () => {
        assert.ok(host?.alive, 'the host of the previous test runs');
        const alpha1 = await fx.store.readLease(ALPHA_KEY);
        const beta1 = await fx.store.readLease(BETA_KEY);
        // One in-flight invocation per family, both waiting before their commit.
        writeJsonAtomic(holdFile(dir, 'fo-alpha', 'a-hold'), { generations: [alpha1.supervisorGeneration] });
        writeJsonAtomic(holdFile(dir, 'fo-beta', 'b-hold'), {});
        await fx.store.acceptRequest(ALPHA_BINDING, 'a-hold');
        await fx.store.acceptRequest(BETA_BINDING, 'b-hold');
        const aHeld = await waitForJsonFile<HeldRecord>(heldFile(dir, 'fo-alpha', 'a-hold', alpha1.supervisorGeneration));
        const bHeld = await waitForJsonFile<HeldRecord>(heldFile(dir, 'fo-beta', 'b-hold', beta1.supervisorGeneration));
        trackPid(aHeld.pid);
        trackPid(bHeld.pid);

        const invalidated = await fx.store.invalidateTerm(ALPHA_KEY);
        assert.equal(invalidated.supervisorGeneration, alpha1.supervisorGeneration + 1);

        const lost = await host.waitForMsg('term lost; dispatch stopped', { supervisorKey: ALPHA_KEY }, 10_000);
        assert.equal(lost.supervisorGeneration, alpha1.supervisorGeneration);
        const reacquired = await host.waitForLog(
          (l) =>
            l.msg === 'term acquired; recovering from persisted state' &&
            l.supervisorKey === ALPHA_KEY &&
            l.supervisorGeneration > invalidated.supervisorGeneration,
          10_000,
          'alpha re-acquisition',
        );
        // The lost family's in-flight worker is terminated (the abort reached the processor).
        const aOutcome = await waitForJsonFile<OutcomeRecord>(outcomeFile(dir, 'fo-alpha', 'a-hold', alpha1.supervisorGeneration));
        assert.equal(aOutcome.status, 'aborted', JSON.stringify(aOutcome));
        // The owed request is recovered by the new alpha term (not held there) and committed under it.
        await owedCleared(ALPHA_BINDING, 'a-hold');
        const aRows = await fx.query("SELECT supervisor_generation FROM fo_effects WHERE scope_id = 'a-hold'");
        assert.deepEqual(
          aRows.map((r) => Number(r.supervisor_generation)),
          [reacquired.supervisorGeneration],
        );

        // Beta never noticed: same term, its worker still waiting, not aborted.
        assert.equal(host.own('term lost; dispatch stopped').filter((l) => l.supervisorKey === BETA_KEY).length, 0);
        const beta2 = await fx.store.readLease(BETA_KEY);
        assert.equal(beta2.supervisorGeneration, beta1.supervisorGeneration, 'beta keeps its generation');
        assert.equal(beta2.holderId, beta1.holderId);
        assert.ok(isAlive(bHeld.pid), "beta's in-flight worker was not terminated");
        assert.equal(readJson(outcomeFile(dir, 'fo-beta', 'b-hold', beta1.supervisorGeneration)), null, "beta's worker has not been aborted");
        fs.writeFileSync(releaseFile(dir, 'fo-beta', 'b-hold', beta1.supervisorGeneration), '');
        const bOutcome = await waitForJsonFile<OutcomeRecord>(outcomeFile(dir, 'fo-beta', 'b-hold', beta1.supervisorGeneration));
        assert.equal(bOutcome.status, 'committed', JSON.stringify(bOutcome));
        await owedCleared(BETA_BINDING, 'b-hold');

        // Both families keep processing new work afterwards.
        await fx.store.acceptRequest(ALPHA_BINDING, 'a2');
        await fx.store.acceptRequest(BETA_BINDING, 'b2');
        await owedCleared(ALPHA_BINDING, 'a2');
        await owedCleared(BETA_BINDING, 'b2');
        const late = await fx.query("SELECT scope_id, supervisor_key, supervisor_generation FROM fo_effects WHERE scope_id IN ('a2', 'b2') ORDER BY scope_id");
        assert.deepEqual(
          late.map((r) => [r.scope_id, r.supervisor_key, Number(r.supervisor_generation)]),
          [
            ['a2', ALPHA_KEY, reacquired.supervisorGeneration],
            ['b2', BETA_KEY, beta1.supervisorGeneration],
          ],
        );
        assert.deepEqual(
          (await leaseRows()).map((r) => r.supervisor_key),
          [ALPHA_KEY, BETA_KEY],
          'still no global lease',
        );
      });
    }

    test('a clean shutdown invalidates every family term', async () => {
      assert.ok(host?.alive, 'the host of the previous tests runs');
      const before = await leaseRows();
      const exit = await host.stop();
      assert.equal(exit.code, 0, host.stderr);
      const rows = await leaseRows();
      assert.deepEqual(
        rows.map((r) => r.supervisor_key),
        [ALPHA_KEY, BETA_KEY],
      );
      for (const r of rows) {
        const prev = before.find((b) => b.supervisor_key === r.supervisor_key)!;
        assert.equal(r.holder_id, null, `${r.supervisor_key} released`);
        assert.equal(Number(r.supervisor_generation), Number(prev.supervisor_generation) + 1, `${r.supervisor_key} generation advanced`);
      }
    });
  });
}
