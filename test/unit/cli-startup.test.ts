// `apsup run` with an invalid configuration: exit code 2, the variable named on stderr, nothing
// started (no database file, no host lock), and no password in any output (A15, RFC 12).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { P, ROOT, TOPIC_FAMILIES, removeTempDirs, runCli, tempDir } from '../cli/helpers.ts';

const REFERENCE_FAMILIES = path.join(ROOT, 'src/families/reference.ts');
after(removeTempDirs);

async function assertRefused(args: string[], vars: Record<string, string>, fragments: string[]): Promise<{ stdout: string; stderr: string }> {
  const r = await runCli(args, vars);
  assert.equal(r.code, 2, `exit code (stderr: ${r.stderr})`);
  for (const f of fragments) assert.ok(r.stderr.includes(f), `stderr should name ${f}: ${r.stderr}`);
  assert.match(r.stdout, /invalid configuration; not starting/);
  assert.doesNotMatch(r.stdout, /supervisor starting|supervisor started/);
  return r;
}

test('an unknown mode exits 2 naming the variable and starts nothing on the SQLite database', async () => {
  const dir = tempDir();
  await assertRefused(
    ['run', '--families', TOPIC_FAMILIES],
    { ARTIFACT_PROCESSING_SUPERVISOR_MODE: 'hybrid', DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}` },
    [`${P}ARTIFACT_PROCESSING_SUPERVISOR_MODE`, 'hybrid'],
  );
  assert.deepEqual(fs.readdirSync(dir), [], 'no database file, journal or host lock was created');
});

test('role background on SQLite (--role) exits 2 naming the role variable', async () => {
  const dir = tempDir();
  await assertRefused(['run', '--families', TOPIC_FAMILIES, '--role', 'background'], { DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}` }, [
    `${P}ARTIFACT_PROCESSING_ROLE`,
    'SQLite',
  ]);
  assert.deepEqual(fs.readdirSync(dir), []);
});

test('a family setting error and an alias conflict exit 2 naming the variables', async () => {
  const dir = tempDir();
  const db = `sqlite:${path.join(dir, 'db.sqlite')}`;
  const run = ['run', '--families', TOPIC_FAMILIES];
  await assertRefused(run, { DATABASE_URL: db, TOPIC_MEMORY_MAX_WORKERS: '0' }, [`${P}TOPIC_MEMORY_MAX_WORKERS`]);
  await assertRefused(run, { DATABASE_URL: db, SKILL_MAX_WORKERS: '2' }, [`${P}SKILL_MAX_WORKERS`]);
  await assertRefused(run, { DATABASE_URL: db, ARTIFACT_PROCESSING_MAX_WORKERS: '3', TOPIC_MEMORY_MAX_WORKERS: '4' }, [
    `${P}ARTIFACT_PROCESSING_MAX_WORKERS`,
    `${P}TOPIC_MEMORY_MAX_WORKERS`,
  ]);
  // The module does not register memory, so the SCHEDULE_SECONDS alias is refused.
  await assertRefused(run, { DATABASE_URL: db, SCHEDULE_SECONDS: '60' }, [`${P}SCHEDULE_SECONDS`]);
  assert.deepEqual(fs.readdirSync(dir), []);
});

// RFC 11: a family not yet integrated registers no fake background capability. Without a
// families module the reference stand-ins would run under the canonical names (topic-memory,
// binding topic-memory.sources) and acknowledge a real deployment's requests without the work.
test('apsup run without a families module exits 2 explaining --families; the reference families are refused', async () => {
  const dir = tempDir();
  const db = `sqlite:${path.join(dir, 'db.sqlite')}`;
  const r = await assertRefused(['run'], { DATABASE_URL: db }, ['--families', `${P}FAMILIES_MODULE`, 'apsup start']);
  assert.doesNotMatch(r.stdout, /families module loaded/);
  // Named explicitly, the reference module still does not run under the canonical names.
  await assertRefused(['run', '--families', REFERENCE_FAMILIES], { DATABASE_URL: db }, ['reference families', 'apsup start']);
  await assertRefused(['run'], { DATABASE_URL: db, FAMILIES_MODULE: REFERENCE_FAMILIES }, ['reference families']);
  assert.deepEqual(fs.readdirSync(dir), [], 'no database file, journal or host lock was created');
  // Adoption maps a deployed binding to a family: it needs the deployment's module too.
  const adopt = await runCli(['migrate', 'adopt', 'profile-apscheduler', '--dry-run'], { DATABASE_URL: db });
  assert.equal(adopt.code, 2, adopt.stderr);
  assert.match(adopt.stderr, /--families/);
});

test('a missing families module exits 2', async () => {
  const dir = tempDir();
  const r = await runCli(['run', '--families', path.join(dir, 'nope.mjs')], { DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}` });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /cannot load families module .*nope\.mjs/);
  assert.deepEqual(fs.readdirSync(dir), []);
});

test('the database password never appears in the output of a failing start', async () => {
  for (const url of ['mysql://app:hunter2secret@127.0.0.1:1/pc', 'oceanbase://app:hunter2secret@127.0.0.1:1/pc']) {
    const r = await assertRefused(['run', '--families', TOPIC_FAMILIES], { ARTIFACT_PROCESSING_SUPERVISOR_MODE: 'hybrid', DATABASE_URL: url }, [
      `${P}ARTIFACT_PROCESSING_SUPERVISOR_MODE`,
    ]);
    assert.doesNotMatch(r.stdout + r.stderr, /hunter2secret/);
  }
  // An invalid URL is refused without echoing it.
  const r = await runCli(['run', '--families', TOPIC_FAMILIES], { DATABASE_URL: 'mysql://app:hunter2secret@127.0.0.1:1/bad-name' });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`${P}DATABASE_URL`));
  assert.doesNotMatch(r.stdout + r.stderr, /hunter2secret/);
});

// A15: a POWERCONTEXT_SERVER_RUNTIME_ variable nothing reads is reported at start-up with the
// closest known name (the start itself goes on; here it ends at the unmigrated database).
test('a mistyped variable is reported at start-up as a warning naming the closest known variable', async () => {
  const dir = tempDir();
  const r = await runCli(['run', '--families', path.join(ROOT, 'test/fixtures/families/idle.ts')], {
    DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}`,
    FX_IDLE_MAX_WORKRES: '3',
  });
  const warning = r.stdout
    .split('\n')
    .filter((l) => l.includes('FX_IDLE_MAX_WORKRES'))
    .map((l) => JSON.parse(l) as { level: number; variable: string; closest: string });
  assert.equal(warning.length, 1, r.stdout);
  assert.equal(warning[0]!.level, 40);
  assert.deepEqual([warning[0]!.variable, warning[0]!.closest], [`${P}FX_IDLE_MAX_WORKRES`, `${P}FX_IDLE_MAX_WORKERS`]);
});
