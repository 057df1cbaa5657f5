// Logs never carry credentials, connection strings, prompts, source text or model output (RFC 12).
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLazyLogger, createLogger } from '../../src/logging.ts';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  const logger = createLogger({ level: 'info', destination });
  return { logger, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const SECRETS = {
  password: 'pw-hunter2secret',
  url: 'mysql://app:pw-in-url@db.internal:3306/pc',
  databaseUrl: 'mysql://app:pw-in-dburl@db.internal:3306/pc',
  prompt: 'PROMPT-TEXT summarise the user diary',
  content: 'SOURCE-CONTENT dear diary',
  output: 'MODEL-OUTPUT the summary',
  source: 'SOURCE-BODY',
  token: 'tok-123',
  secret: 'shh-456',
};

test('sensitive fields are redacted at the top level, nested and two levels deep', () => {
  const { logger, lines, records } = capture();
  logger.info({ family: 'topic-memory', scope: 's-1', ...SECRETS }, 'top');
  logger.info({ family: 'profile', db: { ...SECRETS }, invocation: { request: { ...SECRETS } } }, 'nested');
  logger.child({ password: SECRETS.password, binding: 'profile.candidates' }).warn({ prompt: SECRETS.prompt }, 'child');
  const text = lines.join('\n');
  for (const value of Object.values(SECRETS)) assert.ok(!text.includes(value), `${value} leaked: ${text}`);
  assert.doesNotMatch(text, /hunter2secret|pw-in-url|db\.internal/);
  const [top, nested, child] = records();
  for (const key of Object.keys(SECRETS)) assert.equal(top![key], '[redacted]', key);
  assert.equal(top!.family, 'topic-memory');
  assert.equal(top!.scope, 's-1');
  assert.equal((nested!.db as Record<string, unknown>).password, '[redacted]');
  assert.equal((nested!.db as Record<string, unknown>).output, '[redacted]');
  assert.equal(((nested!.invocation as Record<string, unknown>).request as Record<string, unknown>).content, '[redacted]');
  assert.equal(child!.binding, 'profile.candidates');
  assert.equal(child!.password, '[redacted]');
  assert.equal(child!.prompt, '[redacted]');
  assert.equal(child!.msg, 'child');
});

test('fields inside arrays of objects are redacted', () => {
  const { logger, lines } = capture();
  logger.info({ items: [{ content: 'SECRET-A' }, { content: 'SECRET-B', id: 'i-2' }] }, 'list');
  assert.doesNotMatch(lines.join('\n'), /SECRET-A|SECRET-B/);
  assert.match(lines.join('\n'), /i-2/);
});

test('an environment object is never logged', () => {
  const { logger, lines } = capture();
  logger.error({ env: { POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: 'mysql://u:envpw@h/db' } }, 'spawn failed');
  assert.doesNotMatch(lines.join('\n'), /envpw/);
});

test('ordinary fields and the level are kept', () => {
  const { logger, records } = capture();
  logger.debug({ family: 'x' }, 'hidden at info');
  logger.info({ family: 'experience', maxWorkers: 2, schedule: { kind: 'interval', seconds: 900 } }, 'effective configuration');
  const all = records();
  assert.equal(all.length, 1);
  assert.deepEqual([all[0]!.family, all[0]!.maxWorkers, all[0]!.schedule, all[0]!.level], ['experience', 2, { kind: 'interval', seconds: 900 }, 30]);
});

test('a lazy logger (worker processes) logs, makes children and redacts like the real one', () => {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  const logger = createLazyLogger({ level: 'info', destination, name: 'lazy' });
  assert.equal(lines.length, 0);
  logger.child({ family: 'f', password: 'pw-child' }).warn({ url: 'mysql://u:pw@h/db', n: 1 }, 'from a child');
  logger.debug('below the level');
  assert.equal(logger.level, 'info');
  assert.equal(logger.isLevelEnabled('debug'), false);
  const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(records.length, 1);
  assert.equal(records[0]!.msg, 'from a child');
  assert.equal(records[0]!.name, 'lazy');
  assert.equal(records[0]!.family, 'f');
  assert.equal(records[0]!.n, 1);
  assert.ok(!lines[0]!.includes('pw'), 'the child bindings and the fields are redacted');
});
