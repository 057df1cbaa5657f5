// Issue 40 item 2 between real processes on MariaDB: a statement inside a processor's commit
// cannot outlive its budget (one lease TTL) whatever the session does to itself. `apsup run`
// with one administrator URL (derived accounts) and with the documented accounts of
// ops/mysql-grants.sql, TTL 3 s, the recorder processor:
//   * a 25 s `DO SLEEP` inside ctx.commit, after the session lifted its own statement bounds: it
//     ends within 8 s, the leader keeps its term, nothing of the commit stays;
//   * the same with the worker SIGSTOPped inside the statement: the host ends the session from
//     outside (KILL CONNECTION), so the fence row is free within the same bound.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parseDatabaseUrl } from '../../src/config/database-url.ts';
import type { MysqlConnectionOptions } from '../../src/store/mysql/mysql-session.ts';
import { MysqlStore } from '../../src/store/mysql/mysql-store.ts';
import { createBackend, MYSQL_TEST_URL, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { documentedDatabase } from '../helpers/grants-script.ts';
import { ALPHA_BINDING } from '../fixtures/failover/families.ts';
import { RuntimeProcess, killEverything, makeFixtureDir, trackPid, waitForJsonFile } from '../fixtures/failover/harness.ts';
import { EFFECTS_DDL, heldFile, holdFile, writeJsonAtomic, type HeldRecord } from '../fixtures/failover/protocol.ts';

const TERM_ACQUIRED = 'term acquired; recovering from persisted state';
const TTL_S = 3;
const ENDED_WITHIN_MS = 8000;

interface Setup {
  /** The runtime's URL and settings; `query` as the administrator on its schema. */
  url: string;
  env: Record<string, string>;
  processorUser: RegExp;
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  acceptRequest(binding: string, scope: string): Promise<void>;
  cleanup(): Promise<void>;
}

function boundSuite(name: string, setup: () => Promise<Setup>) {
  describe(`[mysql] ${name}: a commit cannot outlive its budget (TTL 3 s)`, () => {
    let fx: Setup;
    let dir: string;
    let leader: RuntimeProcess;
    let generation: number;
    before(async () => {
      fx = await setup();
      dir = makeFixtureDir('commit-bound');
      leader = new RuntimeProcess('bound-leader', {
        url: fx.url,
        fixtureDir: dir,
        role: 'background',
        env: {
          ...fx.env,
          POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: String(TTL_S),
          POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_RENEW_SECONDS: '0.6',
          // The friendly text checks off: the session really lifts its own bounds first.
          APSUP_UNSAFE_DISABLE_TEXT_CHECKS: '1',
        },
      });
      generation = (await leader.waitForMsg(TERM_ACQUIRED, {}, 20_000)).supervisorGeneration as number;
      assert.ok(leader.own(/^fencing: enforced by grants/).length === 1, 'the leader runs its processors on the derived accounts');
    });
    after(async () => {
      await leader?.stop().catch(() => undefined);
      killEverything();
      await fx?.cleanup();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    /** The worker's sessions that are still running a statement (as the administrator sees them). */
    const sleeping = async () =>
      (await fx.query("SELECT ID, USER FROM information_schema.PROCESSLIST WHERE INFO LIKE 'DO SLEEP%' AND DB = DATABASE()")).filter((r) =>
        fx.processorUser.test(String(r.USER)),
      );

    async function slowCommit(scope: string, pause: boolean): Promise<{ endedMs: number; failure: string; pid: number }> {
      writeJsonAtomic(holdFile(dir, 'fo-alpha', scope), { sleepInCommitSeconds: 25, liftBounds: true });
      await fx.acceptRequest(ALPHA_BINDING, scope);
      const held = await waitForJsonFile<HeldRecord>(heldFile(dir, 'fo-alpha', scope, generation), 20_000);
      trackPid(held.pid);
      // Only this attempt sleeps: the retry after it commits normally.
      fs.rmSync(holdFile(dir, 'fo-alpha', scope));
      await waitFor(async () => (await sleeping()).length === 1, 10_000);
      const startedAt = performance.now();
      if (pause) process.kill(held.pid, 'SIGSTOP');
      try {
        await waitFor(async () => (await sleeping()).length === 0, 20_000, 100);
      } finally {
        if (pause) process.kill(held.pid, 'SIGCONT');
      }
      const endedMs = performance.now() - startedAt;
      // The attempt failed (its connection ended), as the host saw it.
      const failed = await leader.waitForLog(
        (l) => l.msg === 'scope invocation failed' && l.scope === scope && l.workerId === held.workerId,
        10_000,
        'the invocation failure',
      );
      return { endedMs, failure: String(failed.err), pid: held.pid };
    }

    test('a 25 s statement inside ctx.commit ends within 8 s; the term is kept; nothing committed', async () => {
      const { endedMs, failure, pid } = await slowCommit('sleeper', false);
      console.log(`the 25 s statement ended after ${endedMs.toFixed(0)} ms; the invocation failed: ${failure}`);
      assert.ok(endedMs < ENDED_WITHIN_MS, `ended after ${endedMs.toFixed(0)} ms`);
      assert.deepEqual(leader.own(/term lost/), [], 'the leader kept its term');
      const [lease] = await fx.query(
        "SELECT supervisor_generation AS g, expires_at > UTC_TIMESTAMP(3) AS live FROM pc_artifact_processing_leases WHERE supervisor_key = 'global'",
      );
      assert.deepEqual([Number(lease?.g), Number(lease?.live)], [generation, 1]);
      assert.deepEqual(await fx.query("SELECT * FROM fo_effects WHERE scope_id = 'sleeper' AND worker_pid = ?", [pid]), [], 'nothing of the ended commit');
    });

    test('the worker SIGSTOPped inside the statement: the host ends its session within 8 s', async () => {
      const { endedMs, pid } = await slowCommit('paused-sleeper', true);
      console.log(`the paused worker's statement ended after ${endedMs.toFixed(0)} ms`);
      assert.ok(endedMs < ENDED_WITHIN_MS, `ended after ${endedMs.toFixed(0)} ms`);
      await leader.waitForLog((l) => /outlived its budget/.test(l.msg ?? ''), 5000, 'the host ending the session');
      assert.deepEqual(await fx.query("SELECT * FROM fo_effects WHERE scope_id = 'paused-sleeper' AND worker_pid = ?", [pid]), []);
    });
  });
}

boundSuite('one administrator URL', async () => {
  const fx: BackendFixture = await createBackend('mysql');
  await fx.query(EFFECTS_DDL);
  return {
    url: fx.url,
    env: {},
    processorUser: /^aps_p_/,
    query: (sql, params) => fx.query(sql, params),
    acceptRequest: async (b, s) => void (await fx.store.acceptRequest(b, s)),
    cleanup: () => fx.cleanup(),
  };
});

boundSuite('the documented accounts', async () => {
  const doc = await documentedDatabase(MYSQL_TEST_URL);
  await doc.addBusinessTable('fo_effects', EFFECTS_DDL);
  const vars = doc.runtimeVars();
  const runtimeStore = MysqlStore.open(parseDatabaseUrl(vars.DATABASE_URL) as MysqlConnectionOptions & { backend: 'mysql' }, 2);
  return {
    url: vars.DATABASE_URL!,
    env: {
      POWERCONTEXT_SERVER_RUNTIME_PROCESSOR_DATABASE_URL: vars.PROCESSOR_DATABASE_URL!,
      POWERCONTEXT_SERVER_RUNTIME_READER_DATABASE_URL: vars.READER_DATABASE_URL!,
    },
    processorUser: /^apsup_p_/,
    query: async (sql, params) => (await doc.query(sql, params)) as Record<string, unknown>[],
    acceptRequest: async (b, s) => void (await runtimeStore.acceptRequest(b, s)),
    cleanup: async () => {
      await runtimeStore.close();
      await doc.cleanup();
    },
  };
});
