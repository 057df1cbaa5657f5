// Child entries start as precompiled JavaScript (src/child/entry.ts): no TypeScript loader in the
// child unless a user module needs it, the backend's driver only, SQL found from the bundle.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { CACHE_DIR, childEntry, precompileError } from '../../src/child/entry.ts';
import { isInstanceOf, needsTsLoader } from '../../src/child/ts-loader.ts';
import { createEphemeralDatabase } from '../../src/devtools/ephemeral-database.ts';
import { MYSQL_TEST_URL } from '../helpers/backends.ts';

test('the entries are compiled into the gitignored cache and run without tsx', () => {
  const e = childEntry('task-worker-main');
  assert.equal(precompileError(), null);
  assert.equal(e.precompiled, true);
  assert.deepEqual(e.execArgv, []);
  assert.ok(e.modulePath.startsWith(CACHE_DIR + path.sep));
  assert.ok(fs.existsSync(path.join(path.dirname(e.modulePath), 'complete')));
  assert.equal(path.dirname(childEntry('worker-main').modulePath), path.dirname(e.modulePath), 'one build, content-addressed');
});

/** What a precompiled task worker on `url` had loaded (CommonJS modules) by the time it was told to leave. */
async function loadedByWorker(url: string): Promise<string> {
  const e = childEntry('task-worker-main');
  const probe = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-entry-')), 'probe.cjs');
  fs.writeFileSync(
    probe,
    "process.on('exit', () => { const m = Object.keys(require.cache).join('\\n'); require('fs').writeFileSync(process.env.PROBE_OUT, m + '\\n' + process.execArgv.join(' ')); });",
  );
  const out = `${probe}.out`;
  const child = fork(e.modulePath, [], {
    execArgv: ['--require', probe],
    env: { ...process.env, ...e.env, PROBE_OUT: out, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: url, APSUP_CHILD_PRELOAD_TS: '0' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.on('message', (m: { type?: string }) => {
      if (m.type === 'ready') resolve();
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return fs.readFileSync(out, 'utf8');
}

test('a precompiled task worker on SQLite reaches ready without loading mysql2 or tsx', async () => {
  const db = await createEphemeralDatabase('sqlite', { prefix: 'apsup_entry' });
  try {
    const loaded = await loadedByWorker(db.url);
    assert.ok(loaded.includes('better-sqlite3'), 'the SQLite driver is loaded');
    assert.ok(!loaded.includes(`${path.sep}mysql2${path.sep}`), 'mysql2 is not loaded on SQLite');
    assert.ok(!loaded.includes(`${path.sep}tsx${path.sep}`), 'no TypeScript loader');
    assert.ok(!loaded.includes(`${path.sep}pino${path.sep}`), 'pino waits for the first log line');
  } finally {
    await db.drop();
  }
});

test('a precompiled task worker on MySQL reaches ready without loading better-sqlite3 or tsx', async () => {
  const db = await createEphemeralDatabase('mysql', { prefix: 'apsup_entry', mysqlAdminUrl: MYSQL_TEST_URL });
  try {
    const loaded = await loadedByWorker(db.url);
    assert.ok(loaded.includes(`${path.sep}mysql2${path.sep}`), 'the MySQL driver is loaded');
    assert.ok(!loaded.includes('better-sqlite3'), 'the SQLite driver is not loaded on MySQL');
    assert.ok(!loaded.includes(`${path.sep}tsx${path.sep}`), 'no TypeScript loader');
    assert.ok(!loaded.includes(`${path.sep}pino${path.sep}`), 'pino waits for the first log line');
  } finally {
    await db.drop();
  }
});

test('needsTsLoader and isInstanceOf (another copy of the same class)', () => {
  assert.equal(needsTsLoader('/a/b.ts'), true);
  assert.equal(needsTsLoader('/a/b.mts?x=1'), true);
  assert.equal(needsTsLoader('/a/b.mjs'), false);
  assert.equal(needsTsLoader('/a/b.js?attempt=2'), false);
  class ConflictError extends Error {}
  const Copy = (() => class ConflictError extends Error {})();
  class Sub extends Copy {}
  class Other extends Error {}
  assert.equal(isInstanceOf(new ConflictError(), ConflictError), true);
  assert.equal(isInstanceOf(new Copy(), ConflictError), true);
  assert.equal(isInstanceOf(new Sub(), ConflictError), true);
  assert.equal(isInstanceOf(new Other(), ConflictError), false);
  assert.equal(isInstanceOf('ConflictError', ConflictError), false);
});
