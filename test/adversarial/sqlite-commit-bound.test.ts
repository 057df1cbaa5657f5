// Issue 40 item 3 between real processes on SQLite: a processor's commit that stays open past its
// budget (one lease TTL, 3 s here) ends with its process; the OS releases the write lock and the
// journal rolls the transaction back. Meanwhile another process's `apsup trigger` waits and then
// succeeds (never a BUSY error). The worker is SIGSTOPped inside its commit, so only the host can
// end it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { isAlive } from '../../src/devtools/processes.ts';
import { runCli } from '../cli/helpers.ts';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { ALPHA_BINDING, FAMILIES_MODULE_PATH } from '../fixtures/failover/families.ts';
import { RuntimeProcess, killEverything, makeFixtureDir, trackPid, waitForJsonFile } from '../fixtures/failover/harness.ts';
import { EFFECTS_DDL, heldFile, holdFile, writeJsonAtomic, type HeldRecord } from '../fixtures/failover/protocol.ts';

const TERM_ACQUIRED = 'term acquired; recovering from persisted state';
const TTL_S = 3;

describe('[sqlite] a commit past its budget ends with its process', () => {
  let fx: BackendFixture;
  let dir: string;
  let host: RuntimeProcess;
  let generation: number;
  before(async () => {
    fx = await createBackend('sqlite');
    await fx.query(EFFECTS_DDL);
    dir = makeFixtureDir('sqlite-bound');
    host = new RuntimeProcess('sqlite-bound', {
      url: fx.url,
      fixtureDir: dir,
      env: { POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: String(TTL_S) },
    });
    generation = (await host.waitForMsg(TERM_ACQUIRED, {}, 20_000)).supervisorGeneration as number;
    await host.waitForLog((l) => /^fencing: enforced by the engine/.test(l.msg ?? ''), 5000, 'the fencing line');
  });
  after(async () => {
    await host?.stop().catch(() => undefined);
    killEverything();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a worker paused inside its commit is killed at the budget; a trigger meanwhile waits and succeeds', async () => {
    writeJsonAtomic(holdFile(dir, 'fo-alpha', 'held'), { insideCommit: true, generations: [generation] });
    await fx.store.acceptRequest(ALPHA_BINDING, 'held');
    const held = await waitForJsonFile<HeldRecord>(heldFile(dir, 'fo-alpha', 'held', generation), 20_000);
    trackPid(held.pid);
    process.kill(held.pid, 'SIGSTOP'); // it holds the write lock (BEGIN IMMEDIATE) and does nothing
    const pausedAt = performance.now();
    // Another process's trigger while the lock is held: it waits for the lock, never fails BUSY.
    const trigger = await runCli(['trigger', 'fo-beta', 'meanwhile', '--families', FAMILIES_MODULE_PATH], { DATABASE_URL: fx.url });
    const triggerMs = performance.now() - pausedAt;
    assert.equal(trigger.code, 0, trigger.stderr);
    await waitFor(() => !isAlive(held.pid), 10_000, 50);
    const killedMs = performance.now() - pausedAt;
    console.log(`trigger answered after ${triggerMs.toFixed(0)} ms; the paused worker was gone after ${killedMs.toFixed(0)} ms`);
    assert.ok(killedMs < TTL_S * 1000 + 2000, `the worker outlived its budget: ${killedMs.toFixed(0)} ms`);
    await host.waitForLog((l) => /outlived its budget/.test(l.msg ?? ''), 5000, 'the host ending the worker');
    // The business row of the killed commit was rolled back by the journal.
    assert.deepEqual(await fx.query("SELECT * FROM fo_effects WHERE scope_id = 'held' AND supervisor_generation = ?", [generation]), []);
  });
});
