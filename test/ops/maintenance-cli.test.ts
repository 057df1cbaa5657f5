// `apsup maintenance on|off|status` between real processes on both backends (RFC 9 step 1): while
// the window is on, explicit triggers and dirty marks from the CLI are refused (exit 2, nothing
// written) and `apsup run` refuses to start; `off` resumes them; `apsup mode-switch` ends it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';
import { ALPHA_BINDING, FAMILIES_MODULE_PATH } from '../fixtures/failover/families.ts';
import { killEverything, makeFixtureDir, runCli } from '../fixtures/failover/harness.ts';
import { EFFECTS_DDL } from '../fixtures/failover/protocol.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] apsup maintenance`, () => {
    let fx: BackendFixture;
    let dir: string;

    before(async () => {
      fx = await createBackend(backend);
      await fx.query(EFFECTS_DDL);
      dir = makeFixtureDir(`ops-maintenance-${backend}`);
    });

    after(async () => {
      killEverything();
      await fx?.cleanup();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    // --families only where the command reads the families module (another command refuses it).
    const cli = (args: string[]) =>
      runCli(['maintenance', 'mode-switch'].includes(args[0]!) ? args : [...args, '--families', FAMILIES_MODULE_PATH], fx.url, dir);

    test('on refuses triggers, dirty marks and starts; off resumes them; a mode switch ends the window', async () => {
      const on = await cli(['maintenance', 'on', '--json']);
      assert.equal(on.code, 0, on.stderr);
      assert.deepEqual(JSON.parse(on.stdout).maintenance, true);
      const trigger = await cli(['trigger', 'fo-alpha', 's1']);
      assert.equal(trigger.code, 2, trigger.stdout);
      assert.match(trigger.stderr, /trigger refused: the deployment is in maintenance/);
      const dirty = await cli(['mark-dirty', 'fo-alpha', 's1']);
      assert.equal(dirty.code, 2);
      assert.equal(await fx.store.readIntent(ALPHA_BINDING, 's1'), null, 'nothing was written');
      const run = await cli(['run']);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /in maintenance/);
      const status = await cli(['maintenance', 'status']);
      assert.match(status.stdout, /maintenance ON/);

      const off = await cli(['maintenance', 'off']);
      assert.equal(off.code, 0, off.stderr);
      assert.match(off.stdout, /maintenance off/);
      const accepted = await cli(['trigger', 'fo-alpha', 's1']);
      assert.equal(accepted.code, 0, accepted.stderr);
      assert.equal((await fx.store.readIntent(ALPHA_BINDING, 's1'))?.requestedGeneration, 1);

      assert.equal((await cli(['maintenance', 'on'])).code, 0);
      const mode = (await fx.store.readRuntimeMode()).mode ?? 'global';
      const switched = await cli(['mode-switch', '--to', mode === 'global' ? 'dedicated' : 'global', '--json']);
      assert.equal(switched.code, 0, switched.stderr);
      assert.equal(JSON.parse(switched.stdout).maintenanceEnded, true);
      assert.equal((await fx.store.readRuntimeMode()).maintenance, false);
      assert.equal((await cli(['maintenance', 'bogus'])).code, 2);
    });
  });
}
