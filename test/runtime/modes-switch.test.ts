// Mode switch on SQLite (RFC section 9 "关闭与模式切换", acceptance item 11): a global runtime host
// stopped cleanly has its term invalidated (holder NULL, generation advanced); `apsup
// mode-switch --to dedicated` records the new mode (a global start is then refused); a dedicated
// host started on the same database keeps the accepted requests, the dirty marks and the schedule
// checkpoints of the global one and processes them; and back to global the same way. Also: SQLite
// never becomes multi-process (a second host on the same file is refused; a host whose permanent
// term was taken stops instead of taking it back; mode-switch is refused while a host runs), and
// after a crashed global host, mode-switch invalidates its permanent term.
// The MySQL side of A11 (live-lease refusal, stale worker fenced) is in test/ops/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { TermLostError } from '../../src/store/errors.ts';
import { ALPHA_BINDING, BETA_BINDING, FAMILIES_MODULE_PATH } from '../fixtures/failover/families.ts';
import { RuntimeProcess, killEverything, makeFixtureDir, runCli, trackPid, waitForJsonFile, withTimeout } from '../fixtures/failover/harness.ts';
import { EFFECTS_DDL, heldFile, holdFile, outcomeFile, writeJsonAtomic, type HeldRecord, type OutcomeRecord } from '../fixtures/failover/protocol.ts';

const ALPHA_KEY = 'artifact:fo-alpha';
const BETA_KEY = 'artifact:fo-beta';

function sqliteFile(fx: BackendFixture): string {
  assert.equal(fx.target.backend, 'sqlite');
  return (fx.target as { file: string }).file;
}

describe('A11 groundwork on SQLite: global -> dedicated -> global keeps requests, dirty marks and checkpoints', () => {
  let fx: BackendFixture;
  let dir: string;
  let checkpoint: Date;
  let scanGeneration: number;
  let globalGen: number;
  let artifactGens: Record<string, number>;
  let global2: RuntimeProcess;

  before(async () => {
    fx = await createBackend('sqlite');
    await fx.query(EFFECTS_DDL);
    dir = makeFixtureDir('switch');
  });

  after(async () => {
    killEverything();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const intent = async (binding: string, scope: string) => {
    const i = await fx.store.readIntent(binding, scope);
    assert.ok(i, `${binding}/${scope} exists`);
    return i;
  };
  const handled = (binding: string, scope: string) =>
    waitFor(async () => {
      const i = await fx.store.readIntent(binding, scope);
      return i !== null && i.handledGeneration > 0 && i.handledGeneration === i.requestedGeneration;
    }, 15_000);
  const effect = async (scope: string) => fx.query('SELECT supervisor_key, supervisor_generation FROM fo_effects WHERE scope_id = ?', [scope]);
  const lease = (key: string) => fx.store.readLease(key);

  test('global host: processes, then stops cleanly with an owed request and a dirty mark left; its term is invalidated', async () => {
    // Ordinary work present before the first start: the binding was never checked, so the first
    // check scans at once and sets the checkpoint; the interval (3600 s) is then not due again.
    await fx.store.markDirty(ALPHA_BINDING, 'd1');
    writeJsonAtomic(holdFile(dir, 'fo-alpha', 'h1'), { supervisorKeys: ['global'] });

    const g1 = new RuntimeProcess('global-1', { url: fx.url, fixtureDir: dir, mode: 'global' });
    const started = await g1.waitForMsg('supervisor started', { supervisorKey: 'global', state: 'leader' });
    globalGen = started.supervisorGeneration;
    await handled(ALPHA_BINDING, 'd1');
    const d1 = await intent(ALPHA_BINDING, 'd1');
    assert.equal(d1.cleanGeneration, d1.dirtyGeneration, 'd1 confirmed clean');
    const state = await fx.store.readBindingState(ALPHA_BINDING);
    assert.ok(state.lastScheduleCheckpointAt, 'the first check set the checkpoint');
    assert.equal(state.scanInProgress, false);
    checkpoint = state.lastScheduleCheckpointAt!;
    scanGeneration = state.scanGeneration;

    // An accepted request whose invocation is still running at shutdown, and a dirty mark that is
    // not due before the next interval.
    await fx.store.acceptRequest(ALPHA_BINDING, 'h1');
    const held = await waitForJsonFile<HeldRecord>(heldFile(dir, 'fo-alpha', 'h1', globalGen));
    trackPid(held.pid);
    await fx.store.markDirty(ALPHA_BINDING, 'd2');

    const exit = await g1.stop();
    assert.equal(exit.code, 0, g1.stderr);
    const aborted = await waitForJsonFile<OutcomeRecord>(outcomeFile(dir, 'fo-alpha', 'h1', globalGen));
    assert.equal(aborted.status, 'aborted', 'the running worker was terminated at shutdown, not completed');

    const g = await lease('global');
    assert.equal(g.holderId, null, 'global term invalidated at shutdown');
    assert.equal(g.supervisorGeneration, globalGen + 1);
    globalGen = g.supervisorGeneration;
    const h1 = await intent(ALPHA_BINDING, 'h1');
    assert.deepEqual([h1.requestedGeneration, h1.handledGeneration], [1, 0], 'the accepted request is kept, not declared done');
    const d2 = await intent(ALPHA_BINDING, 'd2');
    assert.ok(d2.dirtyGeneration > d2.cleanGeneration && d2.requestedGeneration === 0, 'd2 is dirty and was not admitted');
    assert.deepEqual(await effect('h1'), []);
  });

  test('mode-switch --to dedicated after the global host stopped: global invalidated again, mode recorded; a global start is refused', async () => {
    assert.ok(checkpoint, 'the previous test ran');
    assert.equal((await fx.store.readRuntimeMode()).mode, 'global', 'the first start recorded its mode');
    const out = await runCli(['mode-switch', '--to', 'dedicated', '--families', FAMILIES_MODULE_PATH, '--json'], fx.url, dir);
    assert.equal(out.code, 0, `apsup mode-switch: ${out.stderr}`);
    const report = JSON.parse(out.stdout);
    assert.deepEqual([report.previousMode, report.mode], ['global', 'dedicated']);
    assert.deepEqual(report.invalidated, [{ supervisorKey: 'global', supervisorGeneration: globalGen + 1 }]);
    const g = await lease('global');
    assert.deepEqual([g.holderId, g.supervisorGeneration], [null, globalGen + 1]);
    globalGen = g.supervisorGeneration;
    assert.deepEqual(await fx.store.readRuntimeMode().then((m) => [m.mode, m.maintenance]), ['dedicated', false]);

    const refused = new RuntimeProcess('global-refused', { url: fx.url, fixtureDir: dir, mode: 'global' });
    const exit = await withTimeout(refused.exited, 20_000, 'refused global start');
    assert.equal(exit.code, 2, 'a global start must refuse after the switch');
    assert.match(refused.stderr, /records supervisor mode dedicated; refusing to start in global mode/);
    assert.equal(refused.own(/term acquired|supervisor started/).length, 0);
    assert.deepEqual(await lease('global').then((l) => [l.holderId, l.supervisorGeneration]), [null, globalGen], 'the refused start took no term');
  });

  test('dedicated host on the same database: keeps the request, the dirty mark and the checkpoint, and processes them', async () => {
    assert.ok(checkpoint, 'the previous test ran');
    writeJsonAtomic(holdFile(dir, 'fo-beta', 'h2'), { supervisorKeys: [BETA_KEY] });
    const d = new RuntimeProcess('dedicated', { url: fx.url, fixtureDir: dir, mode: 'dedicated' });
    const alphaStart = await d.waitForMsg('supervisor started', { supervisorKey: ALPHA_KEY, state: 'leader' });
    await d.waitForMsg('supervisor started', { supervisorKey: BETA_KEY, state: 'leader' });

    // The owed request of the global era is recovered by the dedicated alpha supervisor.
    await handled(ALPHA_BINDING, 'h1');
    assert.deepEqual(
      (await effect('h1')).map((r) => [r.supervisor_key, Number(r.supervisor_generation)]),
      [[ALPHA_KEY, alphaStart.supervisorGeneration]],
    );
    // Its first examination checked the schedule before dispatching h1: with the checkpoint kept,
    // the interval is not due, so d2 stays dirty and unadmitted (a reset checkpoint would have
    // scanned at once: never checked + ordinary work).
    const state = await fx.store.readBindingState(ALPHA_BINDING);
    assert.equal(state.lastScheduleCheckpointAt?.getTime(), checkpoint.getTime(), 'checkpoint kept across the switch');
    assert.equal(state.scanGeneration, scanGeneration, 'no new scan');
    const d2 = await intent(ALPHA_BINDING, 'd2');
    assert.ok(d2.dirtyGeneration > d2.cleanGeneration && d2.requestedGeneration === 0, 'd2 still dirty, not admitted');
    // The global key is untouched by the dedicated start (still invalidated).
    const g = await lease('global');
    assert.deepEqual([g.holderId, g.supervisorGeneration], [null, globalGen]);

    // The dirty mark is processed on an explicit request and confirmed clean.
    await fx.store.acceptRequest(ALPHA_BINDING, 'd2');
    await handled(ALPHA_BINDING, 'd2');
    const d2done = await intent(ALPHA_BINDING, 'd2');
    assert.equal(d2done.cleanGeneration, d2done.dirtyGeneration);

    // Leave work for the way back: an owed beta request running at shutdown, and a dirty alpha mark.
    const betaGen = (await lease(BETA_KEY)).supervisorGeneration;
    await fx.store.acceptRequest(BETA_BINDING, 'h2');
    const held = await waitForJsonFile<HeldRecord>(heldFile(dir, 'fo-beta', 'h2', betaGen));
    trackPid(held.pid);
    await fx.store.markDirty(ALPHA_BINDING, 'd3');

    const before = { alpha: await lease(ALPHA_KEY), beta: await lease(BETA_KEY) };
    const exit = await d.stop();
    assert.equal(exit.code, 0, d.stderr);
    artifactGens = {};
    for (const [key, prev] of [
      [ALPHA_KEY, before.alpha],
      [BETA_KEY, before.beta],
    ] as const) {
      const l = await lease(key);
      assert.equal(l.holderId, null, `${key} invalidated at shutdown`);
      assert.equal(l.supervisorGeneration, prev.supervisorGeneration + 1);
      artifactGens[key] = l.supervisorGeneration;
    }
    const h2 = await intent(BETA_BINDING, 'h2');
    assert.deepEqual([h2.requestedGeneration, h2.handledGeneration], [1, 0]);
  });

  test("and back to global: mode-switch --to global invalidates the artifact keys; a new global term recovers the dedicated era's work", async () => {
    assert.ok(artifactGens, 'the previous test ran');
    const out = await runCli(['mode-switch', '--to', 'global', '--families', FAMILIES_MODULE_PATH], fx.url, dir);
    assert.equal(out.code, 0, `apsup mode-switch: ${out.stderr}`);
    assert.match(out.stdout, /mode: dedicated -> global/);
    for (const key of [ALPHA_KEY, BETA_KEY]) {
      const l = await lease(key);
      assert.deepEqual([l.holderId, l.supervisorGeneration], [null, artifactGens[key] + 1], `${key} invalidated by the switch`);
      artifactGens[key] = l.supervisorGeneration;
    }
    const refused = new RuntimeProcess('dedicated-refused', { url: fx.url, fixtureDir: dir, mode: 'dedicated' });
    assert.equal((await withTimeout(refused.exited, 20_000, 'refused dedicated start')).code, 2);
    assert.match(refused.stderr, /records supervisor mode global; refusing to start in dedicated mode/);
    global2 = new RuntimeProcess('global-2', { url: fx.url, fixtureDir: dir, mode: 'global' });
    const started = await global2.waitForMsg('supervisor started', { supervisorKey: 'global', state: 'leader' });
    assert.ok(started.supervisorGeneration > globalGen, `global generation keeps increasing (${globalGen} -> ${started.supervisorGeneration})`);
    await handled(BETA_BINDING, 'h2');
    assert.deepEqual(
      (await effect('h2')).map((r) => [r.supervisor_key, Number(r.supervisor_generation)]),
      [['global', started.supervisorGeneration]],
    );
    for (const key of [ALPHA_KEY, BETA_KEY]) {
      const l = await lease(key);
      assert.deepEqual([l.holderId, l.supervisorGeneration], [null, artifactGens[key]], `${key} stays invalidated`);
    }
    const state = await fx.store.readBindingState(ALPHA_BINDING);
    assert.equal(state.lastScheduleCheckpointAt?.getTime(), checkpoint.getTime(), 'checkpoint kept on the way back');
    const d3 = await intent(ALPHA_BINDING, 'd3');
    assert.ok(d3.dirtyGeneration > d3.cleanGeneration, 'd3 kept dirty');
    await fx.store.acceptRequest(ALPHA_BINDING, 'd3');
    await handled(ALPHA_BINDING, 'd3');
  });

  test('a second SQLite host on the same file while one runs is refused; the running host keeps its term and keeps working', async () => {
    assert.ok(global2?.alive, 'the previous test left a running global host');
    const before = await lease('global');
    for (const mode of ['global', 'dedicated'] as const) {
      const second = new RuntimeProcess(`second-${mode}`, { url: fx.url, fixtureDir: dir, mode });
      const exit = await withTimeout(second.exited, 20_000, `second host (${mode})`);
      assert.equal(exit.code, 2, `the second host (${mode}) must refuse to start`);
      assert.match(second.stderr, /another runtime host \(pid \d+\) already runs on this SQLite database/);
      assert.equal(second.own(/term acquired|supervisor started/).length, 0);
    }
    // mode-switch is refused while the host runs (SQLite: the host lock), and changes nothing.
    const out = await runCli(['mode-switch', '--to', 'dedicated', '--families', FAMILIES_MODULE_PATH], fx.url, dir);
    assert.equal(out.code, 2, out.stdout);
    assert.match(out.stderr, /mode-switch refused: another runtime host \(pid \d+\) already runs on this SQLite database/);
    assert.equal((await fx.store.readRuntimeMode()).mode, 'global');
    const afterRefusal = await lease('global');
    assert.deepEqual(
      [afterRefusal.holderId, afterRefusal.supervisorGeneration],
      [before.holderId, before.supervisorGeneration],
      "the running host's term is untouched",
    );
    assert.equal(
      (await fx.query(`SELECT COUNT(*) AS n FROM pc_artifact_processing_leases WHERE supervisor_key LIKE 'artifact:%' AND holder_id IS NOT NULL`))[0].n,
      0,
    );
    await fx.store.acceptRequest(BETA_BINDING, 'after-refusal');
    await handled(BETA_BINDING, 'after-refusal');
    assert.equal((await global2.stop()).code, 0);
  });
});

describe('SQLite stays single-process: a host whose permanent term was taken stops instead of taking it back', () => {
  let fx: BackendFixture;
  let dir: string;

  before(async () => {
    fx = await createBackend('sqlite');
    await fx.query(EFFECTS_DDL);
    dir = makeFixtureDir('superseded');
  });

  after(async () => {
    killEverything();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test(`superseded term: the host's next fenced write is rejected, it shuts down, the intruder keeps the term`, async (t) => {
    const host = new RuntimeProcess('sqlite-host', { url: fx.url, fixtureDir: dir });
    const started = await host.waitForMsg('supervisor started', { supervisorKey: 'global', state: 'leader' });
    // Someone else takes the permanent term of the same database (as a second host that bypassed
    // the host lock would): SQLite takes it unconditionally.
    const intruder = await fx.store.acquireTerm('global', 'intruder-host', 10_000);
    assert.equal(intruder.supervisorGeneration, started.supervisorGeneration + 1);

    await fx.store.acceptRequest(ALPHA_BINDING, 'x1');
    const exit = await withTimeout(host.exited, 20_000, 'superseded host exit');
    t.diagnostic(
      `superseded host exit: ${JSON.stringify(exit)}; last lines: ${host
        .own()
        .slice(-4)
        .map((l) => l.msg)
        .join(' | ')}`,
    );
    assert.ok(host.own('runtime cannot continue; shutting down').length === 1, JSON.stringify(host.own().map((l) => l.msg)));
    assert.notEqual(exit.signal, 'SIGKILL');
    const l = await fx.store.readLease('global');
    assert.deepEqual([l.holderId, l.supervisorGeneration], ['intruder-host', intruder.supervisorGeneration], 'the superseded host never took the term back');
    const x1 = await fx.store.readIntent(ALPHA_BINDING, 'x1');
    assert.equal(x1?.handledGeneration, 0, 'its rejected commit acknowledged nothing');
    assert.deepEqual(await fx.query('SELECT * FROM fo_effects'), [], 'and wrote nothing');
  });

  test('mode switch after a crashed global host invalidates the old permanent term (apsup mode-switch); dedicated then processes its request', async () => {
    writeJsonAtomic(holdFile(dir, 'fo-alpha', 'c1'), { supervisorKeys: ['global'] });
    await fx.store.acceptRequest(ALPHA_BINDING, 'c1');
    const crashed = new RuntimeProcess('crashing-global', { url: fx.url, fixtureDir: dir });
    const started = await crashed.waitForMsg('supervisor started', { supervisorKey: 'global', state: 'leader' });
    await waitForJsonFile<HeldRecord>(heldFile(dir, 'fo-alpha', 'c1', started.supervisorGeneration));
    crashed.killHard();
    await crashed.exited;
    const stale = await fx.store.readLease('global');
    assert.equal(stale.holderId, started.holderId, 'a crash leaves the permanent term in place');

    const out = await runCli(['mode-switch', '--to', 'dedicated', '--families', FAMILIES_MODULE_PATH], fx.url, dir);
    assert.equal(out.code, 0, `apsup mode-switch: ${out.stderr}`);
    const after = await fx.store.readLease('global');
    assert.equal(after.holderId, null, "the old mode's term is invalidated");
    assert.ok(after.supervisorGeneration > stale.supervisorGeneration, 'and its generation advanced');
    assert.equal((await fx.store.readRuntimeMode()).mode, 'dedicated');
    // A stale worker of the crashed host: its fenced commit is rejected.
    await assert.rejects(
      fx.store.transaction(async (tx) => {
        await fx.store.assertTerm(tx, { supervisorKey: 'global', holderId: started.holderId, supervisorGeneration: started.supervisorGeneration });
      }),
      TermLostError,
    );

    const d = new RuntimeProcess('dedicated-after-crash', { url: fx.url, fixtureDir: dir, mode: 'dedicated' });
    await d.waitForMsg('supervisor started', { supervisorKey: ALPHA_KEY, state: 'leader' });
    await waitFor(async () => {
      const i = await fx.store.readIntent(ALPHA_BINDING, 'c1');
      return i !== null && i.handledGeneration === i.requestedGeneration;
    }, 15_000);
    assert.equal((await d.stop()).code, 0, d.stderr);
    assert.deepEqual(await fx.store.readLease('global').then((l) => [l.holderId, l.supervisorGeneration]), [null, after.supervisorGeneration]);
  });
});
