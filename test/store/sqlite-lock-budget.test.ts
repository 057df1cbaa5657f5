// Issue 40 item 3: one family's open commit delays another family's triggers and commits by at
// most its budget (one lease TTL), never into a BUSY error. The lock wait of a command's store
// (`apsup trigger`, blocking) and of a host's store (asynchronous) is the budget plus a margin,
// not the former fixed 10 s: another process holds BEGIN IMMEDIATE for budget - 1 s (12 s TTL, so
// longer than 10 s) and both wait and succeed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { LOCK_WAIT_MARGIN_MS, lockWaitBoundMs } from '../../src/store/sqlite/lock-wait.ts';
import { openSqliteDatabase } from '../../src/store/sqlite/sqlite-store.ts';
import { openHostStore } from '../../src/store/open.ts';
import { runCli } from '../cli/helpers.ts';
import { createBackend, type BackendFixture } from '../helpers/backends.ts';
import { IDLE_FAMILIES } from '../cli/helpers.ts';
import { bindingOf } from '../fixtures/runtime-harness.ts';

const TTL_S = 12;
const TTL = 'POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_LEASE_TTL_SECONDS';
const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

test('the lock wait is one commit budget plus a margin, never less than 10 s', () => {
  assert.equal(lockWaitBoundMs(15_000), 15_000 + LOCK_WAIT_MARGIN_MS);
  assert.equal(lockWaitBoundMs(3000), 10_000);
  const saved = process.env[TTL];
  process.env[TTL] = String(TTL_S);
  try {
    const db = openSqliteDatabase(':memory:');
    assert.equal(db.pragma('busy_timeout', { simple: true }), TTL_S * 1000 + LOCK_WAIT_MARGIN_MS, "a command's or a worker's connection");
    db.close();
  } finally {
    if (saved === undefined) delete process.env[TTL];
    else process.env[TTL] = saved;
  }
});

/** Another process takes the write lock and keeps it for holdMs; resolves once it holds it. */
function holdWriteLock(file: string, holdMs: number): Promise<{ released: Promise<number | null> }> {
  const source = `
const db = new (require(process.env.DRIVER))(process.env.FILE);
db.exec('BEGIN IMMEDIATE');
console.log('held');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(process.env.HOLD_MS));
db.exec('COMMIT');
`;
  const child = spawn(process.execPath, ['-e', source], {
    env: { ...process.env, DRIVER, FILE: file, HOLD_MS: String(holdMs) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const released = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve({ released }));
    child.once('error', reject);
  });
}

describe('[sqlite] a commit held for its budget delays a trigger, never fails it', () => {
  let fx: BackendFixture;
  before(async () => {
    fx = await createBackend('sqlite');
  });
  after(async () => {
    await fx.cleanup();
  });

  test(`apsup trigger and a host's trigger wait while another process holds the lock for ${TTL_S - 1} s (TTL ${TTL_S} s)`, async () => {
    const file = (fx.target as { file: string }).file;
    const host = openHostStore(fx.target, { sqliteSynchronous: 'FULL', transactionBoundMs: TTL_S * 1000 }) as SqliteStore;
    try {
      const { released } = await holdWriteLock(file, (TTL_S - 1) * 1000);
      const [cli, hosted] = await Promise.all([
        runCli(['trigger', 'fx-manual', 'during-cli', '--families', IDLE_FAMILIES], {
          DATABASE_URL: fx.url,
          ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: String(TTL_S),
        }),
        host.acceptRequest(bindingOf('fx-manual'), 'during-host'),
      ]);
      assert.equal(await released, 0, 'the holder committed');
      assert.equal(cli.code, 0, `apsup trigger: ${cli.stderr}`);
      assert.equal(JSON.parse(cli.stdout.trim()).status, 'accepted');
      assert.equal(hosted.requestedGeneration, 1);
      const rows = await fx.query("SELECT scope_id, requested_generation FROM pc_artifact_processing_intents WHERE scope_id LIKE 'during-%' ORDER BY scope_id");
      assert.deepEqual(rows, [
        { scope_id: 'during-cli', requested_generation: 1 },
        { scope_id: 'during-host', requested_generation: 1 },
      ]);
    } finally {
      await host.close();
    }
  });
});
