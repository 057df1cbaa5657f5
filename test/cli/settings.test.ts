// The one configuration (src/config/settings.ts): every setting read by one schema, errors name
// the variable; the registry does not import the configuration (the config <-> registry circle
// is broken: cron and time zone checks live in src/schedule/).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/database-url.ts';
import { SETTINGS, readSetting, readSettings, settingsSchema, variableOf } from '../../src/config/settings.ts';
import { parseTaskConfig } from '../../src/tasks/config.ts';
import { parseObservabilityAddress } from '../../src/observability/config.ts';
import { ROOT } from './helpers.ts';

test('defaults parse through the same schema; the consumers read the same values', () => {
  const s = readSettings({});
  assert.equal(s.ARTIFACT_PROCESSING_LEASE_TTL_SECONDS, 15);
  assert.deepEqual(s.DATABASE_URL, { backend: 'sqlite', file: './var/powercontext.sqlite' });
  assert.deepEqual(s.OBSERVABILITY_ADDRESS, { host: '127.0.0.1', port: 9464 });
  assert.equal(parseTaskConfig({}, s).capacity, 4);
  const env = { [variableOf('DURABLE_TASK_CAPACITY')]: '9', [variableOf('OBSERVABILITY_ADDRESS')]: 'off' };
  assert.equal(parseTaskConfig(env).capacity, 9);
  assert.equal(parseObservabilityAddress(env), null);
  assert.equal(Object.keys(settingsSchema.shape).length, Object.keys(SETTINGS).length);
});

test('an invalid value of any setting is one ConfigError naming its variable', () => {
  for (const [name, bad] of [
    ['DURABLE_TASK_CAPACITY', '0x10'],
    ['ARTIFACT_PROCESSING_POLL_SECONDS', '-1'],
    ['ARTIFACT_PROCESSING_ROLE', 'both'],
    ['OBSERVABILITY_ADDRESS', '9464'],
    ['DATABASE_URL', 'ftp://x'],
  ] as const) {
    assert.throws(
      () => readSettings({ [variableOf(name)]: bad }),
      (e: unknown) => e instanceof ConfigError && e.message.includes(variableOf(name)),
      name,
    );
  }
});

/** Relative imports of a module, recursively (type imports included). */
function closure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = fs.readFileSync(file, 'utf8');
  for (const m of text.matchAll(/from '(\.[^']+)'/g)) closure(path.resolve(path.dirname(file), m[1]!), seen);
  return seen;
}

test('one setting read alone: the same value and the same error as the whole table, other settings not read', () => {
  for (const env of [{}, { [variableOf('DATABASE_URL')]: 'mysql://u:p@db.example:3307/apsup' }, { [variableOf('DATABASE_URL')]: '  sqlite:/tmp/x.sqlite  ' }]) {
    assert.deepEqual(readSetting('DATABASE_URL', env), readSettings(env).DATABASE_URL);
  }
  assert.equal(readSetting('ARTIFACT_PROCESSING_LEASE_TTL_SECONDS', {}), 15);
  for (const bad of ['', '   ', 'ftp://x', 'sqlite:']) {
    const env = { [variableOf('DATABASE_URL')]: bad };
    const whole = (() => {
      try {
        readSettings(env);
      } catch (e) {
        return (e as Error).message;
      }
      return null;
    })();
    assert.throws(
      () => readSetting('DATABASE_URL', env),
      (e: unknown) => e instanceof ConfigError && e.message === whole,
      JSON.stringify(bad),
    );
  }
  // `apsup migrate` needs the database only: a bad setting it never uses does not stop it.
  const env = { [variableOf('DURABLE_TASK_CAPACITY')]: '0x10', [variableOf('DATABASE_URL')]: 'sqlite:/tmp/y.sqlite' };
  assert.throws(() => readSettings(env), ConfigError);
  assert.deepEqual(readSetting('DATABASE_URL', env), { backend: 'sqlite', file: '/tmp/y.sqlite' });
});

test('the registry does not import src/config (no config <-> registry circle)', () => {
  const files = [...closure(path.join(ROOT, 'src/registry/registration.ts'))].map((f) => path.relative(ROOT, f));
  assert.deepEqual(
    files.filter((f) => f.startsWith('src/config/')),
    [],
    files.join(', '),
  );
  assert.ok(files.includes('src/schedule/cron.ts'));
});
