// RFC 6 and 8, A10: a processor reaches the database only through its read handle (writes refused
// by the database) and its fenced commit. A real worker process (test/fixtures/processors/
// attacker.ts) tries every former write path — autocommit writes, the supervisor's tables, every
// control operation, a session switched back to read-write, a transaction handle kept past its
// commit, a COMMIT inside the fenced callback — once under its live term and once after the test
// took the term over. Only the fenced commit under the live term may change anything.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { FIXTURES_DIR, P, bindingOf, startRuntime, testFamily } from '../fixtures/runtime-harness.ts';

const F = 'fx-attack';
const ATTACKER = path.join(FIXTURES_DIR, 'processors', 'attacker.ts');
type Attempt = { ok: boolean; name?: string; code?: string };

const REFUSED_READS = [
  'read_insert',
  'read_database_refuses',
  'read_lease_write',
  'read_maintenance_write',
  'read_session_read_write',
  'read_begin',
  'read_ddl',
  'read_invalidate_term',
  'read_acquire_term',
  'read_set_maintenance',
  'read_mark_dirty',
  'read_accept_request',
  'read_switch_mode',
];

for (const backend of BACKENDS) {
  describe(`[${backend}] A10 a processor has no write path around its fenced commit`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-attack-'));

    before(async () => {
      fx = await createBackend(backend);
      await fx.query('CREATE TABLE fx_attack (phase VARCHAR(40) NOT NULL, path VARCHAR(60) NOT NULL)');
      if (backend === 'mysql') {
        // A function that writes: a SELECT through the read handle may call it; only the
        // database's read-only session can refuse that.
        await fx.query(`CREATE FUNCTION fx_attack_write(p VARCHAR(40), w VARCHAR(60)) RETURNS INT MODIFIES SQL DATA
          BEGIN INSERT INTO fx_attack (phase, path) VALUES (p, w); RETURN 1; END`);
      }
      runtime = await startRuntime(fx, [testFamily(F, { maxWorkers: 1, processorModule: ATTACKER })], {
        env: { [`${P}ARTIFACT_PROCESSING_TERMINATE_GRACE_SECONDS`]: '5' },
        workerEnv: { ...process.env, APSUP_TEST_ATTACK_DIR: dir },
      });
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('every former path is refused with a typed error, live and after a takeover; only the live fenced commit writes', async () => {
      const lease = (await runtime.leases()).find((l) => l.supervisorKey === 'global')!;
      const modeBefore = await fx.store.readRuntimeMode();
      await runtime.trigger(F, 's1');
      const phase1 = path.join(dir, 's1.phase1');
      await waitFor(() => fs.existsSync(phase1), 30_000);
      // Take the term over: invalidated, then held by another candidate for a minute.
      const other = fx.openStore();
      await other.invalidateTerm('global');
      const usurper = await other.acquireTerm('global', 'usurper', 60_000);
      assert.equal(usurper.outcome, 'acquired');
      const report = path.join(dir, 's1.json');
      await waitFor(() => fs.existsSync(report), 30_000);
      const out = JSON.parse(fs.readFileSync(report, 'utf8')) as Record<string, Attempt>;

      for (const phase of ['live', 'taken_over']) {
        assert.equal(out[`${phase}.store_reachable`].ok, false, `${phase}: ctx.store is not reachable`);
        for (const label of REFUSED_READS) {
          assert.deepEqual(out[`${phase}.${label}`], { ok: false, name: 'ReadOnlyError', code: 'read_only' }, `${phase}.${label}`);
        }
      }
      // Inside the fenced transaction under the live term: refused by the handle.
      for (const label of ['tx_commit_then_write', 'tx_lease_write', 'tx_ddl']) {
        assert.deepEqual(out[`live.${label}`], { ok: false, name: 'ReadOnlyError', code: 'read_only' }, `live.${label}`);
      }
      assert.deepEqual(out['live.fenced'], { ok: true }, 'the fenced commit under the live term commits');
      // After the takeover: the fenced path is refused by the SQL, and the handle of the live
      // commit is dead.
      for (const label of ['tx_commit_then_write', 'tx_lease_write', 'tx_ddl', 'fenced']) {
        assert.deepEqual(out[`taken_over.${label}`], { ok: false, name: 'TermLostError', code: 'term_lost' }, `taken_over.${label}`);
      }
      assert.deepEqual(out['taken_over.leaked_tx'], { ok: false, name: 'TransactionClosedError', code: 'transaction_closed' });

      // The database: one business row (the live fenced commit), the usurper's lease untouched,
      // no maintenance, no mode change, no intent made by the attacker.
      assert.deepEqual(await fx.query('SELECT phase, path FROM fx_attack'), [{ phase: 'live', path: 'fenced' }]);
      const now = await fx.store.readLease('global');
      assert.equal(now.holderId, 'usurper');
      assert.equal(now.supervisorGeneration, usurper.supervisorGeneration);
      assert.ok(now.supervisorGeneration > lease.supervisorGeneration);
      const mode = await fx.store.readRuntimeMode();
      assert.equal(mode.maintenance, false);
      assert.equal(mode.mode, modeBefore.mode);
      assert.equal(await fx.store.readIntent(bindingOf(F), 'attacker-scope'), null);
      assert.equal((await fx.query("SELECT COUNT(*) AS n FROM pc_artifact_processing_leases WHERE holder_id = 'attacker'"))[0].n, 0);
      await other.close();
    });
  });
}
