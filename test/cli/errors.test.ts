// Every documented error of the CLI through bin/apsup.mjs (a real child process): one line
// `apsup: <what is wrong, naming the variable, file or argument>`, the documented exit code
// (README "Exit codes": 2 input/configuration, 3 drift, 4 adoption refused, 1 unexpected), no
// stack trace unless --verbose / APSUP_DEBUG=1, and no database created by a read-only command.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { after, describe, test } from 'node:test';
import { migrateTarget } from '../../src/devtools/ephemeral-database.ts';
import { P, TOPIC_FAMILIES, removeTempDirs, runCli, tempDir, type CliResult } from './helpers.ts';
import { FIXTURE_TASKS_MODULE as TASKS_REGISTRY } from '../tasks/harness.ts';

after(removeTempDirs);

function assertOneLine(r: CliResult, code: number, fragments: Array<string | RegExp>): void {
  assert.equal(r.code, code, `exit code (stderr: ${r.stderr})`);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got: ${r.stderr}`);
  assert.match(lines[0]!, /^apsup: /);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  for (const f of fragments) {
    if (typeof f === 'string') assert.ok(lines[0]!.includes(f), `stderr should contain ${f}: ${r.stderr}`);
    else assert.match(lines[0]!, f);
  }
}

describe('bad input and configuration: one line, exit 2', () => {
  test('an empty mysql:// URL names the variable (migrate status)', async () => {
    assertOneLine(await runCli(['migrate', 'status'], { DATABASE_URL: 'mysql://' }), 2, [`${P}DATABASE_URL`]);
  });

  test('a password with an invalid percent-encoding names the variable and never echoes the password', async () => {
    const r = await runCli(['migrate', 'status'], { DATABASE_URL: 'mysql://root:se%zzcret@127.0.0.1:3306/x' });
    assertOneLine(r, 2, [`${P}DATABASE_URL`, 'password', '%25']);
    assert.doesNotMatch(r.stderr + r.stdout, /se%zzcret/);
  });

  test('an unknown option, an unknown command, no command', async () => {
    assertOneLine(await runCli(['status', '--bogus']), 2, ["'--bogus'"]);
    assertOneLine(await runCli(['frobnicate']), 2, ['"frobnicate"']);
    // An option of another command is refused too (each command parses its own).
    assertOneLine(await runCli(['maintenance', 'status', '--payload', 'x']), 2, ["'--payload'"]);
    const none = await runCli([]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /usage:/);
  });

  test('extra arguments are refused, not dropped', async () => {
    assertOneLine(await runCli(['trigger', 'topic-memory', 'a', 'b', 'c']), 2, ['unexpected argument "b"']);
    assertOneLine(await runCli(['status', 'extra']), 2, ['unexpected argument "extra"']);
    assertOneLine(await runCli(['migrate', 'up', 'now']), 2, ['unexpected argument "now"']);
    assertOneLine(await runCli(['tasks', 'show', '1', '2']), 2, ['unexpected argument "2"']);
    assertOneLine(await runCli(['trigger', 'topic-memory']), 2, ['<family> <scope>']);
  });

  test('an empty or blank scope id gets a message, not the usage page', async () => {
    for (const scope of ['', '   ']) {
      const r = await runCli(['trigger', 'topic-memory', scope, '--families', TOPIC_FAMILIES]);
      assertOneLine(r, 2, ['scope id must not be empty']);
    }
  });

  test('tasks submit with a payload that is not JSON', async () => {
    const dir = tempDir();
    assertOneLine(await runCli(['tasks', 'submit', 'index-file', '--payload', 'notjson'], { DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}` }), 2, [
      '--payload',
    ]);
    assert.deepEqual(fs.readdirSync(dir), [], 'nothing was created');
  });

  test('APSUP_LOG_LEVEL and APSUP_LOG_FORMAT are validated', async () => {
    const dir = tempDir();
    const db = { DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}` };
    assertOneLine(await runCli(['run', '--families', TOPIC_FAMILIES], db, { APSUP_LOG_LEVEL: 'loud' }), 2, ['APSUP_LOG_LEVEL', 'loud']);
    assertOneLine(await runCli(['run', '--families', TOPIC_FAMILIES], db, { APSUP_LOG_FORMAT: 'xml' }), 2, ['APSUP_LOG_FORMAT', 'xml']);
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  test('--verbose and APSUP_DEBUG=1 add the stack', async () => {
    for (const r of [
      await runCli(['migrate', 'status', '--verbose'], { DATABASE_URL: 'mysql://' }),
      await runCli(['migrate', 'status'], { DATABASE_URL: 'mysql://' }, { APSUP_DEBUG: '1' }),
    ]) {
      assert.equal(r.code, 2);
      assert.match(r.stderr, /^apsup: .*DATABASE_URL/);
      assert.match(r.stderr, /\n\s+at /, `a stack trace: ${r.stderr}`);
    }
  });
});

describe('the database', () => {
  test('read-only commands never create a database file or directory', async () => {
    const dir = tempDir();
    const db = { DATABASE_URL: `sqlite:${path.join(dir, 'missing', 'db.sqlite')}` };
    for (const args of [
      ['status', '--families', TOPIC_FAMILIES],
      ['migrate', 'status'],
      ['migrate', 'sql'],
      ['tasks', 'list'],
      ['tasks', 'show', '1'],
      ['maintenance', 'status'],
      ['migrate', 'adopt', 'topic-memory-pr1490', '--dry-run', '--families', TOPIC_FAMILIES],
      ['run', '--families', TOPIC_FAMILIES],
    ]) {
      const r = await runCli(args, db);
      assertOneLine(r, 2, ['does not exist', path.join(dir, 'missing', 'db.sqlite')]);
      assert.deepEqual(fs.readdirSync(dir), [], `${args.join(' ')} created nothing`);
    }
  });

  test('run and status on an unmigrated database say to run apsup migrate up', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'db.sqlite');
    new Database(file).close();
    for (const args of [
      ['run', '--families', TOPIC_FAMILIES],
      ['status', '--families', TOPIC_FAMILIES],
      ['tasks', 'list'],
    ]) {
      assertOneLine(await runCli(args, { DATABASE_URL: `sqlite:${file}` }), 2, ['apsup migrate up']);
    }
    assert.ok(!fs.existsSync(`${file}.host.lock`), 'no host lock was left');
  });

  test('run and tasks worker refuse while a migration is pending', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'db.sqlite');
    const applied = await migrateTarget({ backend: 'sqlite', file });
    const last = applied.at(-1)!;
    const db = new Database(file);
    db.prepare('DELETE FROM pc_aps_schema_migrations WHERE name = ?').run(last);
    db.close();
    const r = await runCli(['run', '--families', TOPIC_FAMILIES], { DATABASE_URL: `sqlite:${file}` });
    assertOneLine(r, 2, ['pending', last, 'apsup migrate up']);
    assert.doesNotMatch(r.stdout, /supervisor start/);
    // A task worker is a host too: it would call operations the pending migration installs.
    const w = await runCli(['tasks', 'worker'], { DATABASE_URL: `sqlite:${file}`, TASKS_MODULE: TASKS_REGISTRY });
    assertOneLine(w, 2, ['tasks worker', 'pending', last, 'apsup migrate up']);
  });

  test('an unreachable MySQL server: one line naming the redacted target, exit 1', async () => {
    const r = await runCli(['run', '--families', TOPIC_FAMILIES], { DATABASE_URL: 'mysql://root:pw@127.0.0.1:1/x' });
    assertOneLine(r, 1, ['cannot reach mysql://root:***@127.0.0.1:1/x', 'ECONNREFUSED']);
    assert.doesNotMatch(r.stderr + r.stdout, /:pw@/);
  });
});

describe('migrate down', () => {
  test('asks for --yes before it drops tables that hold rows (SQLite)', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'db.sqlite');
    const target = { backend: 'sqlite' as const, file };
    const { Migrator } = await import('../../src/migrations/migrator.ts');
    const { openMigrationDriver } = await import('../../src/migrations/drivers.ts');
    const driver = await openMigrationDriver(target);
    const migrator = new Migrator(driver);
    const to = migrator.files.find((f) => f.name.includes('_adoptions'))!.name;
    await migrator.up({ to });
    await driver.close();
    const db = new Database(file);
    db.prepare("INSERT INTO pc_aps_adoptions (adoption, state, summary) VALUES ('x', 'converted', '{}')").run();
    db.close();
    const url = { DATABASE_URL: `sqlite:${file}` };
    assertOneLine(await runCli(['migrate', 'down'], url), 2, ['pc_aps_adoptions (1 rows)', '--yes']);
    const still = new Database(file);
    assert.equal((still.prepare('SELECT COUNT(*) AS n FROM pc_aps_adoptions').get() as { n: number }).n, 1, 'nothing was dropped');
    still.close();
    const yes = await runCli(['migrate', 'down', '--yes'], url);
    assert.equal(yes.code, 0, yes.stderr);
    assert.match(yes.stdout, new RegExp(`reverted: ${to}`));
  });
});
