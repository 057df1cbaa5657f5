// Issue 40 review: a processor that keeps quiet about its transactions, or opens sessions of its
// own with its account's URL, still cannot hold a lock past its budget. A session of the derived
// processor account and one of the reader account (a SELECT-only account may take FOR UPDATE
// locks on business rows in MariaDB) open transactions holding row locks and idle; the running
// host (TTL 3 s) ends both from the server's own list of transactions, within its budget plus a
// sweep period and a second.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import mysql from 'mysql2/promise';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { RuntimeProcess, killEverything, makeFixtureDir } from '../fixtures/failover/harness.ts';
import { EFFECTS_DDL } from '../fixtures/failover/protocol.ts';

const TERM_ACQUIRED = 'term acquired; recovering from persisted state';
const TTL_S = 3;

describe('[mysql] sessions no worker reported are ended at their budget', () => {
  let fx: BackendFixture;
  let dir: string;
  let host: RuntimeProcess;
  before(async () => {
    fx = await createBackend('mysql');
    await fx.query(EFFECTS_DDL);
    // A business table of its own, keyed: each session locks one row, neither waits for the other.
    await fx.query('CREATE TABLE adv_rows (id INT NOT NULL PRIMARY KEY, v INT NOT NULL) ENGINE = InnoDB');
    await fx.query('INSERT INTO adv_rows (id, v) VALUES (0, 0), (1, 0)');
    dir = makeFixtureDir('rogue-session');
    host = new RuntimeProcess('sweeping-host', {
      url: fx.url,
      fixtureDir: dir,
      role: 'background',
      env: { POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: String(TTL_S) },
    });
    await host.waitForMsg(TERM_ACQUIRED, {}, 20_000);
  });
  after(async () => {
    await host?.stop().catch(() => undefined);
    killEverything();
    await fx?.cleanup();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a processor session and a reader session holding row locks are ended', async () => {
    const t = fx.target as { host: string; port: number; database: string };
    const derived = await fx.query('SELECT role, user_name, password FROM pc_aps_derived_accounts ORDER BY role');
    assert.equal(derived.length, 2);
    const sessions = await Promise.all(
      derived.map((d) => mysql.createConnection({ host: t.host, port: t.port, user: String(d.user_name), password: String(d.password), database: t.database })),
    );
    const ids: number[] = [];
    for (const [i, c] of sessions.entries()) {
      c.on('error', () => undefined);
      await c.query('START TRANSACTION');
      await c.query('SELECT * FROM adv_rows WHERE id = ? FOR UPDATE', [i]);
      ids.push(c.threadId!);
    }
    const startedAt = performance.now();
    try {
      const alive = async () => (await fx.query('SELECT ID FROM information_schema.PROCESSLIST WHERE ID IN (?, ?)', ids)).length;
      await waitFor(async () => (await alive()) === 0, 15_000, 200);
      const endedMs = performance.now() - startedAt;
      console.log(`both sessions ended after ${endedMs.toFixed(0)} ms (TTL ${TTL_S} s)`);
      assert.ok(endedMs < TTL_S * 1000 + 1000 + 1000 + 2000, `ended after ${endedMs.toFixed(0)} ms`);
      await host.waitForLog((l) => /outlived its budget: ended/.test(l.msg ?? ''), 5000, 'the sweeper ending them');
    } finally {
      for (const c of sessions) await c.end().catch(() => undefined);
    }
  });
});
