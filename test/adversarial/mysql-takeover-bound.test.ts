// Issue 40 item 2, the case no watchdog of the old leader can cover: the leader SIGSTOPped while
// its worker sits in a fenced commit whose statement runs 25 s and whose own event loop is
// blocked (so neither the host's nor the worker's timer runs). The standby's takeover must not
// wait for that statement: it ends the stale session itself (KILL CONNECTION, as the processor
// account) and leads within TTL + 2 s of the pause (plus a renewal period and scheduling slack).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createBackend, type BackendFixture } from '../helpers/backends.ts';
import { ALPHA_BINDING } from '../fixtures/failover/families.ts';
import { RuntimeProcess, killEverything, makeFixtureDir, trackPid, waitForJsonFile } from '../fixtures/failover/harness.ts';
import { EFFECTS_DDL, heldFile, holdFile, writeJsonAtomic, type HeldRecord } from '../fixtures/failover/protocol.ts';

const TERM_ACQUIRED = 'term acquired; recovering from persisted state';
const STANDBY = 'standby: another candidate holds the term';
const TTL_S = 3;
const RENEW_S = 0.6;
const SLACK_MS = 1500;

describe('[mysql] a takeover after a paused leader does not wait for its blocked worker', () => {
  let fx: BackendFixture;
  let dir: string;
  const env = {
    POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: String(TTL_S),
    POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_RENEW_SECONDS: String(RENEW_S),
    // The friendly checks off: the session lifts its own bounds, the server alone decides.
    APSUP_UNSAFE_DISABLE_TEXT_CHECKS: '1',
  };
  before(async () => {
    fx = await createBackend('mysql');
    await fx.query(EFFECTS_DDL);
    dir = makeFixtureDir('takeover-bound');
  });
  after(async () => {
    killEverything();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('leader paused, worker blocked inside a 25 s statement: the standby leads within TTL + 2 s', async () => {
    const a = new RuntimeProcess('paused-leader', { url: fx.url, fixtureDir: dir, role: 'background', env });
    const gA = (await a.waitForMsg(TERM_ACQUIRED, {}, 20_000)).supervisorGeneration as number;
    const b = new RuntimeProcess('standby', { url: fx.url, fixtureDir: dir, role: 'background', env });
    await b.waitForMsg(STANDBY, {}, 20_000);
    writeJsonAtomic(holdFile(dir, 'fo-alpha', 'blocked'), { blockLoopSeconds: 25, liftBounds: true, generations: [gA] });
    await fx.store.acceptRequest(ALPHA_BINDING, 'blocked');
    const held = await waitForJsonFile<HeldRecord>(heldFile(dir, 'fo-alpha', 'blocked', gA), 20_000);
    trackPid(held.pid);
    process.kill(a.pid, 'SIGSTOP');
    const pausedAt = performance.now();
    try {
      const bound = TTL_S * 1000 + 2000 + RENEW_S * 1000 + SLACK_MS;
      const led = await b.waitForMsg(TERM_ACQUIRED, {}, 30_000).catch(() => null);
      const tookMs = performance.now() - pausedAt;
      console.log(`the standby led ${tookMs.toFixed(0)} ms after the pause (TTL ${TTL_S} s)`);
      assert.ok(led, 'the standby never led');
      assert.ok((led.supervisorGeneration as number) > gA);
      assert.ok(tookMs < bound, `the standby led after ${tookMs.toFixed(0)} ms, bound ${bound} ms`);
      // Ended by the standby: its takeover's breaker, or its sweep of stale processor transactions, whichever ran first.
      await b.waitForLog(
        (l) => /a takeover waits for a fenced transaction|a transaction of a processor or reader session outlived its budget/.test(l.msg ?? ''),
        2000,
        'the standby ending the stale session',
      );
    } finally {
      process.kill(a.pid, 'SIGCONT');
    }
    assert.deepEqual(
      await fx.query("SELECT * FROM fo_effects WHERE scope_id = 'blocked' AND supervisor_generation = ?", [gA]),
      [],
      'nothing of the stale commit',
    );
    await b.stop();
    await a.stop().catch(() => undefined);
  });
});
