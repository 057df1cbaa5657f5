// SQLite runs one host process: the host lock refuses a second live host and replaces a stale one.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { HostLockError, acquireSqliteHostLock } from '../../src/runtime/sqlite-host-lock.ts';

function tempDb(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-lock-')), 'db.sqlite');
}

test('a live host holds the lock; a second acquisition is refused with a clear error; release frees it', async () => {
  const db = tempDb();
  // A live "host": a child process whose pid is written into the lock.
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  try {
    fs.writeFileSync(`${db}.host.lock`, `${child.pid}\n`);
    assert.throws(
      () => acquireSqliteHostLock(db),
      (e: unknown) => e instanceof HostLockError && e.message.includes(`pid ${child.pid}`) && /one host process/.test(e.message),
    );
  } finally {
    child.kill('SIGKILL');
  }
  await new Promise((r) => child.once('exit', r));
  // The holder died: its lock is stale and is replaced.
  const release = acquireSqliteHostLock(db);
  assert.equal(fs.readFileSync(`${db}.host.lock`, 'utf8').trim(), String(process.pid));
  release();
  assert.equal(fs.existsSync(`${db}.host.lock`), false);
});

test('apsup run refuses to start a second SQLite host on the same database', async () => {
  const db = tempDb();
  // A migrated database: `run` refuses an unmigrated one before it reaches the host lock.
  const env = { ...process.env, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: `sqlite:${db}`, APSUP_LOG_LEVEL: 'silent' };
  assert.equal(spawnSync(process.execPath, ['bin/apsup.mjs', 'migrate', 'up'], { env, stdio: 'ignore' }).status, 0);
  const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  fs.writeFileSync(`${db}.host.lock`, `${holder.pid}\n`);
  try {
    const run = spawn(process.execPath, ['bin/apsup.mjs', 'run', '--families', 'test/fixtures/families/idle.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    run.stderr.on('data', (d) => {
      stderr += String(d);
    });
    const code = await new Promise<number | null>((resolve) => run.once('exit', resolve));
    assert.equal(code, 2);
    assert.match(stderr, /another runtime host \(pid \d+\) already runs on this SQLite database/);
  } finally {
    holder.kill('SIGKILL');
  }
});
