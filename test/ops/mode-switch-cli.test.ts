// `apsup mode-switch` and `apsup status --json` between real processes on both backends (RFC 9,
// acceptance item 11): the switch is refused while a live candidate of the old mode holds the
// lease (MySQL: a live lease, named with its holder and key; SQLite: a live host lock), works
// after the old host stopped, a start in the old mode is then refused (exit 2), and the new
// mode's host processes the requests left by the old one. status reports terms, mode and backlog.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { ALPHA_BINDING, BETA_BINDING, FAMILIES_MODULE_PATH } from '../fixtures/failover/families.ts';
import { RuntimeProcess, killEverything, makeFixtureDir, runCli, withTimeout } from '../fixtures/failover/harness.ts';
import { EFFECTS_DDL } from '../fixtures/failover/protocol.ts';

const ALPHA_KEY = 'artifact:fo-alpha';
const BETA_KEY = 'artifact:fo-beta';

for (const backend of BACKENDS) {
  describe(`[${backend}] apsup mode-switch and apsup status`, () => {
    let fx: BackendFixture;
    let dir: string;

    before(async () => {
      fx = await createBackend(backend);
      await fx.query(EFFECTS_DDL);
      dir = makeFixtureDir(`ops-switch-${backend}`);
    });

    after(async () => {
      killEverything();
      await fx?.cleanup();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    const cli = (args: string[]) => runCli([...args, '--families', FAMILIES_MODULE_PATH], fx.url, dir);
    const handled = (binding: string, scope: string) =>
      waitFor(async () => {
        const i = await fx.store.readIntent(binding, scope);
        return i !== null && i.handledGeneration > 0 && i.handledGeneration === i.requestedGeneration;
      }, 15_000);

    test('status --json before any start: no mode recorded, no live term, counts of the backlog', async () => {
      await fx.store.markDirty(ALPHA_BINDING, 'd1');
      await fx.store.markDirty(ALPHA_BINDING, 'd2');
      await fx.store.acceptRequest(ALPHA_BINDING, 'd2');
      const out = await cli(['status', '--json']);
      assert.equal(out.code, 0, out.stderr);
      const s = JSON.parse(out.stdout);
      assert.equal(s.backend, backend);
      assert.equal(s.mode, null);
      assert.equal(s.maintenance, false);
      assert.equal(typeof s.dbNow, 'string');
      assert.equal(s.countCap, 1_000_000);
      assert.deepEqual(
        s.supervisors.map((x: { supervisorKey: string }) => x.supervisorKey),
        ['global', ALPHA_KEY, BETA_KEY],
      );
      for (const x of s.supervisors) assert.deepEqual([x.holderId, x.supervisorGeneration, x.live, x.expiresAt], [null, 0, false, null]);
      const alpha = s.families.find((f: { binding: string }) => f.binding === ALPHA_BINDING);
      assert.ok(alpha, JSON.stringify(s.families));
      assert.deepEqual(
        [alpha.owedInvocations, alpha.ordinaryBacklog, alpha.countCapped, alpha.scanGeneration, alpha.scanInProgress, alpha.lastCheckpointAt],
        [1, 2, false, 0, false, null],
      );
      assert.ok('policy' in alpha && 'nextDueAt' in alpha && 'family' in alpha);
      if (backend === 'sqlite') assert.deepEqual(s.sqliteHost, { pid: null, alive: false });
      else assert.equal(s.sqliteHost, null);
    });

    test('mode-switch is refused while a live global host runs; status shows its live term', async () => {
      const g = new RuntimeProcess(`ops-global-${backend}`, { url: fx.url, fixtureDir: dir, mode: 'global' });
      const started = await g.waitForMsg('supervisor started', { supervisorKey: 'global', state: 'leader' });
      await handled(ALPHA_BINDING, 'd2');

      const status = JSON.parse((await cli(['status', '--json'])).stdout);
      assert.equal(status.mode, 'global');
      const gs = status.supervisors.find((x: { supervisorKey: string }) => x.supervisorKey === 'global');
      assert.deepEqual([gs.holderId, gs.supervisorGeneration, gs.live], [started.holderId, started.supervisorGeneration, true]);
      if (backend === 'sqlite') assert.deepEqual(status.sqliteHost, { pid: g.pid, alive: true });
      else assert.ok(gs.expiresAt, 'a MySQL lease has an expiry');

      const out = await cli(['mode-switch', '--to', 'dedicated']);
      assert.equal(out.code, 2, out.stdout);
      if (backend === 'mysql') {
        assert.match(out.stderr, /mode-switch refused: a live candidate of the global mode holds a lease: global is held by \S+/);
        assert.ok(out.stderr.includes(started.holderId), out.stderr);
      } else {
        assert.match(out.stderr, /mode-switch refused: another runtime host \(pid \d+\) already runs on this SQLite database/);
      }
      const l = await fx.store.readLease('global');
      assert.deepEqual([l.holderId, l.supervisorGeneration], [started.holderId, started.supervisorGeneration], 'the refusal changed nothing');
      assert.equal((await fx.store.readRuntimeMode()).mode, 'global');

      // Work left for the next mode: an owed request accepted while no host runs.
      assert.equal((await g.stop()).code, 0, g.stderr);
      await fx.store.acceptRequest(BETA_BINDING, 'left-1');
    });

    test('after the host stopped: switch to dedicated; global start refused; dedicated processes the work left; and back', async () => {
      const before = await fx.store.readLease('global');
      const out = await cli(['mode-switch', '--to', 'dedicated', '--json']);
      assert.equal(out.code, 0, out.stderr);
      const r = JSON.parse(out.stdout);
      assert.deepEqual(
        [r.previousMode, r.mode, r.invalidated],
        ['global', 'dedicated', [{ supervisorKey: 'global', supervisorGeneration: before.supervisorGeneration + 1 }]],
      );

      const refused = new RuntimeProcess(`ops-refused-${backend}`, { url: fx.url, fixtureDir: dir, mode: 'global' });
      assert.equal((await withTimeout(refused.exited, 20_000, 'refused start')).code, 2);
      assert.match(refused.stderr, /records supervisor mode dedicated; refusing to start in global mode/);

      const d = new RuntimeProcess(`ops-dedicated-${backend}`, { url: fx.url, fixtureDir: dir, mode: 'dedicated' });
      await d.waitForMsg('supervisor started', { supervisorKey: BETA_KEY, state: 'leader' });
      await handled(BETA_BINDING, 'left-1');
      const status = JSON.parse((await cli(['status', '--json'])).stdout);
      assert.equal(status.mode, 'dedicated');
      assert.deepEqual(
        status.supervisors.filter((x: { live: boolean }) => x.live).map((x: { supervisorKey: string }) => x.supervisorKey),
        [ALPHA_KEY, BETA_KEY],
      );
      assert.equal((await d.stop()).code, 0, d.stderr);

      await fx.store.acceptRequest(ALPHA_BINDING, 'left-2');
      const back = await cli(['mode-switch', '--to', 'global']);
      assert.equal(back.code, 0, back.stderr);
      assert.match(back.stdout, /mode: dedicated -> global/);
      const g = new RuntimeProcess(`ops-global2-${backend}`, { url: fx.url, fixtureDir: dir, mode: 'global' });
      await g.waitForMsg('supervisor started', { supervisorKey: 'global', state: 'leader' });
      await handled(ALPHA_BINDING, 'left-2');
      assert.equal((await g.stop()).code, 0, g.stderr);
    });

    // RFC 9 step 2: the switch works from the database, not from the families module: a family
    // removed from the module (fo-gone) keeps no valid term, and its live candidate is detected.
    test('mode-switch checks and invalidates the key of a family the module no longer lists', async () => {
      assert.equal((await cli(['mode-switch', '--to', 'dedicated'])).code, 0);
      const gone = await fx.store.acquireTerm('artifact:fo-gone', 'gone-host', backend === 'mysql' ? 8000 : 60_000);
      if (backend === 'mysql') {
        const refused = await cli(['mode-switch', '--to', 'global']);
        assert.equal(refused.code, 2, refused.stdout);
        assert.match(refused.stderr, /artifact:fo-gone is held by gone-host/);
        assert.equal((await fx.store.readRuntimeMode()).mode, 'dedicated');
        await waitFor(async () => !(await fx.store.readLease('artifact:fo-gone')).live, 15_000, 200);
      }
      const out = await cli(['mode-switch', '--to', 'global', '--json']);
      assert.equal(out.code, 0, out.stderr);
      const r = JSON.parse(out.stdout);
      assert.ok(
        r.invalidated.some(
          (t: { supervisorKey: string; supervisorGeneration: number }) =>
            t.supervisorKey === 'artifact:fo-gone' && t.supervisorGeneration === gone.supervisorGeneration + 1,
        ),
        out.stdout,
      );
      const l = await fx.store.readLease('artifact:fo-gone');
      assert.deepEqual([l.holderId, l.live], [null, false], "the removed family's term is fenced out");
    });
  });
}
