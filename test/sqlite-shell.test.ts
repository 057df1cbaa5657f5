// A DBA opens the embedded database with the distribution's sqlite3 shell (Debian 12: 3.40): the
// schema must use only what SQLite 3.37 reads (the signal triggers raise literal codes), every
// code an operation script raises has its trigger, and the shell reads every table. The shell
// test runs wherever `sqlite3` is installed, and always in CI (.ci/run installs it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { STORE_ERROR_CODES } from '../src/store/errors.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { createBackend, type BackendFixture } from './helpers/backends.ts';

const SCRIPTS = path.join(import.meta.dirname, '..', 'sql', 'sqlite');
const shell = spawnSync('sqlite3', ['-version'], { encoding: 'utf8' });
const hasShell = shell.status === 0;

function raisedCodes(): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of fs.readdirSync(SCRIPTS).filter((f) => f.endsWith('.sql'))) {
    const text = fs.readFileSync(path.join(SCRIPTS, file), 'utf8');
    for (const m of text.matchAll(/INSERT INTO pc_aps_signals \(code\)\s+SELECT\s+'([a-z_]+)'/g)) out.set(m[1], file);
  }
  return out;
}

describe('the embedded database and the stock sqlite3 shell', () => {
  let fx: BackendFixture;
  before(async () => {
    fx = await createBackend('sqlite');
  });
  after(async () => {
    await fx?.cleanup();
  });

  test('every code an operation script raises has a literal trigger and a typed error', async () => {
    const triggers = new Set(
      (await fx.query("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'pc_aps_signals'")).map((r) => String(r.name)),
    );
    assert.equal(triggers.has('pc_aps_signals_raise'), false, 'the RAISE-with-expression trigger is gone');
    const codes = raisedCodes();
    assert.ok(codes.size >= 10, `found ${codes.size} raised codes`);
    for (const [code, file] of codes) {
      assert.ok(triggers.has(`pc_aps_signal_${code}`), `${file} raises ${code}, which has no trigger`);
      assert.ok((STORE_ERROR_CODES as readonly string[]).includes(code), `${code} (${file}) is not a typed store error`);
    }
    const store = fx.store as SqliteStore;
    assert.throws(() => store.db.prepare("INSERT INTO pc_aps_signals (code) VALUES ('term_lost')").run(), {
      code: 'SQLITE_CONSTRAINT_TRIGGER',
      message: 'term_lost',
    });
    assert.throws(() => store.db.prepare("INSERT INTO pc_aps_signals (code) VALUES ('no_such_code')").run(), {
      code: 'SQLITE_CONSTRAINT_TRIGGER',
      message: 'unknown_signal',
    });
    await assert.rejects(
      store.transaction((tx) => store.assertTerm(tx, { supervisorKey: 'global', holderId: 'nobody', supervisorGeneration: 1 })),
      { name: 'TermLostError' },
    );
  });

  test('the sqlite3 shell opens the schema and reads every table', {
    skip: hasShell || process.env.CI === 'true' ? false : 'the sqlite3 shell is not installed (.ci/run installs it)',
  }, async () => {
    assert.ok(hasShell, 'the sqlite3 shell must be installed in CI (.ci/run installs it)');
    const file = (fx.target as { file: string }).file;
    const run = (sql: string) => spawnSync('sqlite3', ['-readonly', file, sql], { encoding: 'utf8' });
    for (const command of ['.tables', '.schema', 'PRAGMA integrity_check']) {
      const r = run(command);
      assert.equal(r.status, 0, `${command}: ${r.stderr}`);
      assert.equal(r.stderr, '', `${command}: ${r.stderr}`);
    }
    const tables = (await fx.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")).map((r) => String(r.name));
    assert.ok(tables.includes('pc_artifact_processing_intents') && tables.includes('pc_durable_tasks'));
    for (const t of tables) {
      const r = run(`SELECT COUNT(*) FROM ${t}`);
      assert.equal(r.status, 0, `${t}: ${r.stderr}`);
      assert.match(r.stdout, /^\d+\n$/, t);
    }
  });
});
