// The pure parts of the restricted accounts (src/store/mysql/db-accounts.ts,
// src/store/session-accounts.ts): names, grant statements, LIKE patterns of schema grants, the
// summary lines, and the children's environment, which never carries the host's own URL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDatabaseUrl } from '../../src/config/database-url.ts';
import { derivedUserName, grantStatements, PROCESSOR_PROCEDURES, quotedGrantee, schemaPatternMatches } from '../../src/store/mysql/db-accounts.ts';
import { childDatabaseEnv, fencingSummary, hostAccounts, resolveSessionAccounts, type SessionAccounts } from '../../src/store/session-accounts.ts';

test('derived user names: per schema, per role, within 32 characters', () => {
  const p = derivedUserName('processor', 'apsup');
  assert.match(p, /^aps_p_[0-9a-f]{16}$/);
  assert.match(derivedUserName('reader', 'apsup'), /^aps_r_[0-9a-f]{16}$/);
  assert.notEqual(p, derivedUserName('processor', 'apsup2'));
  assert.ok(p.length <= 32);
});

test('grant statements: the processor gets its procedures and DML per table, the reader SELECT only', () => {
  const p = grantStatements('processor', 'u', 'db', ['t1']);
  assert.equal(p.length, PROCESSOR_PROCEDURES.length + 1);
  assert.ok(p.every((s) => s.endsWith("TO 'u'@'%'")));
  assert.equal(p.at(-1), "GRANT SELECT, INSERT, UPDATE, DELETE ON `db`.`t1` TO 'u'@'%'");
  assert.deepEqual(grantStatements('reader', 'r', 'd`b', ['a`b']), ["GRANT SELECT ON `d``b`.`a``b` TO 'r'@'%'"]);
});

test('schema grant patterns are LIKE patterns', () => {
  assert.ok(schemaPatternMatches('apsup', 'apsup'));
  assert.ok(schemaPatternMatches('aps%', 'apsup'));
  assert.ok(schemaPatternMatches('aps_p', 'apsup'));
  assert.ok(!schemaPatternMatches('aps\\_p', 'apsup'));
  assert.ok(schemaPatternMatches('aps\\_p', 'aps_p'));
  assert.ok(!schemaPatternMatches('other', 'apsup'));
  assert.equal(quotedGrantee('aps_p_1@%'), "'aps_p_1'@'%'");
  assert.equal(quotedGrantee('a@b@localhost'), "'a@b'@'localhost'");
});

test('summaries name what enforces the fencing; the children never get the host URL', () => {
  const host = parseDatabaseUrl('mysql://root:secret@db:3306/apsup');
  assert.match(fencingSummary(hostAccounts(host)), /^filtered only: one privileged account/);
  assert.match(fencingSummary(hostAccounts({ backend: 'sqlite', file: 'x' })), /^fencing: enforced by the engine/);
  const granted: SessionAccounts = {
    setup: 'grants',
    source: 'derived',
    processor: { ...host, user: 'aps_p_1', password: 'pp' } as typeof host,
    reader: { ...host, user: 'aps_r_1', password: 'rr' } as typeof host,
    problems: [],
  };
  assert.equal(fencingSummary(granted), 'fencing: enforced by grants (derived processor account aps_p_1, reader aps_r_1)');
  const env = childDatabaseEnv(granted);
  assert.ok(
    Object.values(env).every((v) => !v.includes('secret') && !v.includes('root')),
    JSON.stringify(env),
  );
  assert.equal(env.POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL, 'mysql://aps_p_1:pp@db:3306/apsup');
});

test('a configured processor URL must name the same server and database', async () => {
  const host = parseDatabaseUrl('mysql://rt:x@db:3306/apsup');
  await assert.rejects(
    resolveSessionAccounts(host, { POWERCONTEXT_SERVER_RUNTIME_PROCESSOR_DATABASE_URL: 'mysql://p:x@db:3306/other' }),
    /PROCESSOR_DATABASE_URL must name the same server and database/,
  );
});
