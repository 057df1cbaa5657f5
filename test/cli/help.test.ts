// `apsup <command> --help`: usage, options and the environment of that command; `run --help`
// lists every setting of the one schema (src/config/settings.ts) with its default. Logs: a
// configuration error in human-readable mode is printed once; APSUP_LOG_FORMAT=pretty gives
// words for levels and ISO times.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { COMMANDS } from '../../src/cli/commands.ts';
import { SETTINGS, variableOf } from '../../src/config/settings.ts';
import { TOPIC_FAMILIES, runCli, tempDir } from './helpers.ts';

test('run --help lists every POWERCONTEXT_SERVER_RUNTIME_* setting with its default', async () => {
  const r = await runCli(['run', '--help']);
  assert.equal(r.code, 0, r.stderr);
  for (const [name, d] of Object.entries(SETTINGS)) {
    const line = r.stdout.split('\n').find((l) => l.trim().startsWith(`${variableOf(name)} `));
    assert.ok(line, `run --help lists ${variableOf(name)}`);
    if (d.default !== undefined) assert.ok(line.includes(`default ${d.default}`), `${name}: default ${d.default} in ${line}`);
  }
  assert.match(r.stdout, /--families/);
  assert.match(r.stdout, /APSUP_LOG_LEVEL/);
});

test('every command has its own help: usage, its options, the environment it reads', async () => {
  for (const [name, spec] of Object.entries(COMMANDS)) {
    const r = await runCli([name, '--help']);
    assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`apsup ${name}`));
    for (const option of Object.keys(spec.options)) assert.ok(r.stdout.includes(`--${option}`), `${name} --help lists --${option}`);
    assert.match(r.stdout, /environment:/);
    assert.match(r.stdout, /POWERCONTEXT_SERVER_RUNTIME_/);
    assert.match(r.stdout, /exit codes:/);
  }
  const general = await runCli(['--help']);
  assert.equal(general.code, 0);
  for (const name of Object.keys(COMMANDS)) assert.ok(general.stdout.includes(`apsup ${name}`), name);
});

test('human-readable logs: a configuration error is printed once; levels as words, ISO times', async () => {
  const dir = tempDir();
  const db = { DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}` };
  const refused = await runCli(['run', '--families', TOPIC_FAMILIES], { ...db, ARTIFACT_PROCESSING_SUPERVISOR_MODE: 'hybrid' }, { APSUP_LOG_FORMAT: 'pretty' });
  assert.equal(refused.code, 2);
  const mentions = (refused.stdout + refused.stderr).split('\n').filter((l) => l.includes('ARTIFACT_PROCESSING_SUPERVISOR_MODE'));
  assert.equal(mentions.length, 1, `printed once: ${refused.stdout}${refused.stderr}`);
  // A warning logged before the refusal, in the pretty format.
  const pretty = await runCli(['run', '--families', TOPIC_FAMILIES], { ...db, TOPIC_MEMORY_MAX_WORKRES: '2' }, { APSUP_LOG_FORMAT: 'pretty' });
  const line = pretty.stdout.split('\n').find((l) => l.includes('TOPIC_MEMORY_MAX_WORKRES'));
  assert.ok(line, pretty.stdout);
  assert.match(line, /^\[\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\] WARN/);
  // JSON stays the default off a terminal.
  const json = await runCli(['run', '--families', TOPIC_FAMILIES], { ...db, TOPIC_MEMORY_MAX_WORKRES: '2' });
  const warn = json.stdout.split('\n').find((l) => l.includes('TOPIC_MEMORY_MAX_WORKRES'));
  assert.equal(JSON.parse(warn!).level, 40);
});
