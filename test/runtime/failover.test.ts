// A10 failover between real processes on MariaDB (RFC section 8 "任期、后端和进程角色" and
// acceptance item 10). Two `apsup run --role background` candidates compete for the 'global'
// lease: exactly one leads, the other is a healthy standby (logged once, no restart loop, one lease
// row). After the leader is SIGKILLed, the standby takes over once the lease expires (about TTL +
// renewal period, never before), with a strictly higher generation, and dispatches the owed work.
// A normal worker of the killed leader exits with it (IPC disconnect). A worker that outlives its
// parent anyway (the recorder processor simulates one by removing the worker host's 'disconnect'
// exit) is fenced by the database: its commit is rejected with term_lost, leaves no business row
// and does not advance handled_generation; the new leader's own invocation of that scope, running
// at the same time, commits. Finally a clean shutdown hands over without waiting for expiry.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { ALPHA_BINDING, BETA_BINDING } from '../fixtures/failover/families.ts';
import { RENEW_MS, RuntimeProcess, TTL_MS, isAlive, killEverything, makeFixtureDir, trackPid, waitForJsonFile } from '../fixtures/failover/harness.ts';
import {
  EFFECTS_DDL,
  heldFile,
  holdFile,
  outcomeFile,
  releaseFile,
  writeJsonAtomic,
  type HeldRecord,
  type OutcomeRecord,
} from '../fixtures/failover/protocol.ts';

const TERM_ACQUIRED = 'term acquired; recovering from persisted state';
const STANDBY = 'standby: another candidate holds the term';
const STARTING = 'artifact processing supervisor starting';
const ACKED = 'scope invocation acknowledged';

describe('A10: failover between two background candidates (MariaDB, real processes)', () => {
  let fx: BackendFixture;
  let dir: string;
  let leader: RuntimeProcess;
  let standby: RuntimeProcess;
  let leaderHolder: string;
  let standbyHolder: string;
  let gA: number;
  let gB: number;
  let staleWorker: HeldRecord;
  let staleHandledBefore: number;

  before(async () => {
    fx = await createBackend('mysql');
    await fx.query(EFFECTS_DDL);
    dir = makeFixtureDir('failover');
  });

  after(async () => {
    killEverything();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  const intent = async (binding: string, scope: string) => {
    const i = await fx.store.readIntent(binding, scope);
    assert.ok(i, `intent ${binding}/${scope} exists`);
    return i;
  };
  const effects = (where = '1 = 1', params: unknown[] = []) =>
    fx.query(
      `SELECT family, scope_id, supervisor_key, holder_id, supervisor_generation, claimed_generation, worker_pid FROM fo_effects WHERE ${where} ORDER BY scope_id`,
      params,
    );

  test('exactly one candidate leads; the other is a healthy standby: logged once, stays up, never restarts', async () => {
    // Both candidates start at the same time and race for the same key.
    const a = new RuntimeProcess('candidate-a', { url: fx.url, fixtureDir: dir, role: 'background' });
    const b = new RuntimeProcess('candidate-b', { url: fx.url, fixtureDir: dir, role: 'background' });
    await waitFor(() => {
      const aLeads = a.own(TERM_ACQUIRED).length > 0;
      const bLeads = b.own(TERM_ACQUIRED).length > 0;
      if (a.exit || b.exit) throw new Error(`a candidate exited: a=${JSON.stringify(a.exit)} b=${JSON.stringify(b.exit)} ${a.stderr}${b.stderr}`);
      return (aLeads && b.own(STANDBY).length > 0) || (bLeads && a.own(STANDBY).length > 0);
    }, 20_000);
    [leader, standby] = a.own(TERM_ACQUIRED).length > 0 ? [a, b] : [b, a];
    assert.equal(standby.own(TERM_ACQUIRED).length, 0, 'only one candidate acquired the term');
    const leaderStart = leader.own(STARTING)[0];
    const standbyStart = standby.own(STARTING)[0];
    assert.equal(leaderStart.role, 'background');
    assert.deepEqual(leaderStart.supervisors, ['global']);
    assert.deepEqual(standbyStart.supervisors, ['global']);
    leaderHolder = leaderStart.holderId;
    standbyHolder = standbyStart.holderId;
    assert.notEqual(leaderHolder, standbyHolder);

    const acquired = leader.own(TERM_ACQUIRED)[0];
    gA = acquired.supervisorGeneration;
    assert.equal(acquired.supervisorKey, 'global');
    assert.equal(acquired.holderId, leaderHolder);
    assert.equal(standby.own(STANDBY)[0].leader, leaderHolder, 'the standby names the live holder');

    // One lease row for the one logical supervisor, whatever the number of candidates.
    const rows = await fx.query('SELECT supervisor_key, holder_id, supervisor_generation FROM pc_artifact_processing_leases');
    assert.deepEqual(
      rows.map((r) => r.supervisor_key),
      ['global'],
    );
    const first = await fx.store.readLease('global');
    assert.equal(first.holderId, leaderHolder);
    assert.equal(first.supervisorGeneration, gA);
    assert.ok(first.live && first.expiresAt, 'a live lease with an expiry');

    // Observe for a whole TTL of renewals (progress-based, not a fixed sleep): the leader's expiry
    // moves past the first one plus a TTL, so the standby has tried ~TTL/renewal times meanwhile.
    const firstExpiry = first.expiresAt!.getTime();
    await waitFor(
      async () => {
        const l = await fx.store.readLease('global');
        return l.expiresAt !== null && l.expiresAt.getTime() >= firstExpiry + TTL_MS;
      },
      TTL_MS * 4,
      50,
    );
    const later = await fx.store.readLease('global');
    assert.equal(later.holderId, leaderHolder, 'the leader kept the term');
    assert.equal(later.supervisorGeneration, gA, 'renewal never increments the generation');

    assert.ok(standby.alive, `the standby is still running (exit: ${JSON.stringify(standby.exit)})`);
    assert.ok(leader.alive, 'the leader is still running');
    assert.equal(standby.own(STANDBY).length, 1, 'standby is logged once, not once per attempt');
    assert.equal(standby.own(STARTING).length, 1, 'the standby never restarted');
    assert.equal(standby.own(TERM_ACQUIRED).length, 0);
    assert.equal(standby.own(/term lost|failed|fatal/).length, 0, 'standby is not an error state');
    assert.equal(standby.lines.filter((l) => l.level >= 40).length, 0, 'no warnings or errors from the standby');
    assert.equal(leader.own(/term lost/).length, 0);
  });

  test('SIGKILL of the leader: the standby takes over after the lease expires, with a higher generation, and dispatches owed work', async (t) => {
    assert.ok(leader && standby, 'the previous test started both candidates');
    // Two in-flight invocations of the leader, both waiting before their commit:
    //   'stale'    its worker ignores the death of its parent (removes the IPC 'disconnect' exit),
    //              and holds in every term, so the new leader's invocation waits too;
    //   'obedient' a normal worker, held only in the first term.
    writeJsonAtomic(holdFile(dir, 'fo-alpha', 'stale'), { ignoreDisconnect: true });
    writeJsonAtomic(holdFile(dir, 'fo-alpha', 'obedient'), { generations: [gA] });
    await fx.store.acceptRequest(ALPHA_BINDING, 'stale');
    await fx.store.acceptRequest(ALPHA_BINDING, 'obedient');
    staleWorker = await waitForJsonFile<HeldRecord>(heldFile(dir, 'fo-alpha', 'stale', gA));
    const obedientWorker = await waitForJsonFile<HeldRecord>(heldFile(dir, 'fo-alpha', 'obedient', gA));
    trackPid(staleWorker.pid);
    trackPid(obedientWorker.pid);
    assert.deepEqual(
      { key: staleWorker.supervisorKey, holder: staleWorker.holderId, gen: staleWorker.supervisorGeneration, claimed: staleWorker.claimedRequestGeneration },
      { key: 'global', holder: leaderHolder, gen: gA, claimed: 1 },
      "the worker carries the leader's execution context",
    );
    staleHandledBefore = (await intent(ALPHA_BINDING, 'stale')).handledGeneration;
    assert.equal(staleHandledBefore, 0);

    const killedAt = Date.now();
    leader.killHard();
    await leader.exited;

    // A normal worker does not outlive its supervisor: it exits when the IPC channel closes.
    await waitFor(() => !isAlive(obedientWorker.pid), 5_000);
    assert.ok(isAlive(staleWorker.pid), 'the stale worker (ignoring the disconnect) is still running');

    // Work accepted while nobody leads is owed, not lost.
    await fx.store.acceptRequest(ALPHA_BINDING, 'owed-1');
    await fx.store.acceptRequest(BETA_BINDING, 'owed-2');

    const takeover = await standby.waitForMsg(TERM_ACQUIRED, {}, TTL_MS + RENEW_MS + 8_000);
    const tookMs = Date.now() - killedAt;
    gB = takeover.supervisorGeneration;
    t.diagnostic(`takeover ${tookMs} ms after SIGKILL; generation ${gA} -> ${gB}`);
    assert.ok(gB > gA, `generation strictly increases on takeover (${gA} -> ${gB})`);
    assert.equal(takeover.holderId, standbyHolder);
    // The lease of a dead leader is taken only once it expired (last renewal <= one period before
    // the kill), and soon after (the standby retries every renewal period); the upper bound allows
    // for process scheduling and log delivery.
    assert.ok(tookMs >= TTL_MS - RENEW_MS - 250, `no takeover of a live lease (took ${tookMs} ms)`);
    assert.ok(tookMs <= TTL_MS + RENEW_MS + 1_500, `takeover within about TTL + renewal period (took ${tookMs} ms)`);
    const lease = await fx.store.readLease('global');
    assert.equal(lease.holderId, standbyHolder);
    assert.equal(lease.supervisorGeneration, gB);
    assert.ok(standby.alive);

    // The new leader recovers owed requests from the database: the ones accepted while nobody
    // led, and the one whose worker died with the old leader.
    for (const [binding, scope] of [
      [ALPHA_BINDING, 'owed-1'],
      [BETA_BINDING, 'owed-2'],
      [ALPHA_BINDING, 'obedient'],
    ] as const) {
      await waitFor(async () => {
        const i = await intent(binding, scope);
        return i.handledGeneration === i.requestedGeneration;
      }, 15_000);
    }
    const done = await effects("scope_id IN ('owed-1', 'owed-2', 'obedient')");
    assert.deepEqual(
      done.map((r) => [r.scope_id, r.supervisor_key, r.holder_id, Number(r.supervisor_generation)]),
      [
        ['obedient', 'global', standbyHolder, gB],
        ['owed-1', 'global', standbyHolder, gB],
        ['owed-2', 'global', standbyHolder, gB],
      ],
    );
    await standby.waitForMsg(ACKED, { scope: 'owed-1' });
    // The new leader's invocation of 'stale' is running (held) beside the stale worker.
    const fresh = await waitForJsonFile<HeldRecord>(heldFile(dir, 'fo-alpha', 'stale', gB));
    trackPid(fresh.pid);
    assert.equal(fresh.holderId, standbyHolder);
    assert.notEqual(fresh.pid, staleWorker.pid);
  });

  test('the stale worker of the killed leader is fenced: term_lost, no business row, handled not advanced; the new term then commits', async () => {
    assert.ok(staleWorker && gB, 'the previous test produced a stale worker and a new term');
    assert.ok(isAlive(staleWorker.pid), 'the stale worker is still alive when released');
    fs.writeFileSync(releaseFile(dir, 'fo-alpha', 'stale', gA), '');
    const stale = await waitForJsonFile<OutcomeRecord>(outcomeFile(dir, 'fo-alpha', 'stale', gA));
    assert.equal(stale.status, 'rejected', `the old term's commit must be rejected: ${JSON.stringify(stale)}`);
    assert.equal(stale.code, 'term_lost');
    assert.equal(stale.pid, staleWorker.pid);

    assert.deepEqual(await effects('supervisor_generation = ?', [gA]), [], 'no business row of the old term');
    const afterStale = await intent(ALPHA_BINDING, 'stale');
    assert.equal(afterStale.handledGeneration, staleHandledBefore, 'the stale worker did not advance handled_generation');
    assert.ok(afterStale.requestedGeneration > afterStale.handledGeneration, 'the request is still owed');

    // The new leader's invocation commits and acknowledges.
    fs.writeFileSync(releaseFile(dir, 'fo-alpha', 'stale', gB), '');
    const fresh = await waitForJsonFile<OutcomeRecord>(outcomeFile(dir, 'fo-alpha', 'stale', gB));
    assert.equal(fresh.status, 'committed', JSON.stringify(fresh));
    await waitFor(async () => {
      const i = await intent(ALPHA_BINDING, 'stale');
      return i.handledGeneration === i.requestedGeneration;
    }, 10_000);
    const rows = await effects("scope_id = 'stale'");
    assert.equal(rows.length, 1, 'exactly one business row for the scope');
    assert.equal(Number(rows[0].supervisor_generation), gB);
    assert.equal(rows[0].holder_id, standbyHolder);
    await standby.waitForMsg(ACKED, { scope: 'stale' });
  });

  test('a clean shutdown of the leader invalidates its term: a standby takes over without waiting for the lease to expire', async (t) => {
    assert.ok(standby?.alive && gB, 'the new leader of the previous tests runs');
    const next = new RuntimeProcess('candidate-c', { url: fx.url, fixtureDir: dir, role: 'background' });
    const standbyLine = await next.waitForMsg(STANDBY);
    assert.equal(standbyLine.leader, standbyHolder);
    const stoppedAt = Date.now();
    const exit = await standby.stop();
    assert.equal(exit.code, 0, standby.stderr);
    assert.equal(standby.own('shut down').length, 1);
    const taken = await next.waitForMsg(TERM_ACQUIRED, {}, TTL_MS * 3);
    const tookMs = Date.now() - stoppedAt;
    t.diagnostic(`handover ${tookMs} ms after SIGTERM; generation ${gB} -> ${taken.supervisorGeneration}`);
    // Shutdown invalidated gB (gB + 1); the next acquisition increments again.
    assert.equal(taken.supervisorGeneration, gB + 2, 'invalidation and takeover each advance the generation');
    // The released lease is taken at the standby's next attempt. Waiting for expiry instead would
    // take at least TTL - renewal period after the stop began (the last renewal is at most one
    // period old); the bound includes the shutdown itself.
    assert.ok(tookMs < TTL_MS - RENEW_MS, `handover did not wait for expiry (took ${tookMs} ms)`);
    await fx.store.acceptRequest(BETA_BINDING, 'after-handover');
    await next.waitForMsg(ACKED, { scope: 'after-handover' });
    assert.equal((await next.stop()).code, 0);
    const final = await fx.store.readLease('global');
    assert.equal(final.holderId, null);
    assert.equal(final.supervisorGeneration, gB + 3);
  });
});
