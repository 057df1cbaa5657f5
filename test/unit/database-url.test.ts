import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, databaseUrlOf, parseDatabaseUrl, redactDatabaseUrl } from '../../src/config/database-url.ts';

test('default is the embedded SQLite file', () => {
  assert.deepEqual(parseDatabaseUrl(undefined), { backend: 'sqlite', file: './var/powercontext.sqlite' });
});

test('mysql:// and oceanbase:// select the same backend', () => {
  const a = parseDatabaseUrl('mysql://app:s3cr%40t@db.local:2881/pc');
  const b = parseDatabaseUrl('oceanbase://app:s3cr%40t@db.local:2881/pc');
  assert.deepEqual(a, { backend: 'mysql', host: 'db.local', port: 2881, user: 'app', password: 's3cr@t', database: 'pc' });
  assert.deepEqual(a, b);
});

test('errors name the variable and never echo the value', () => {
  for (const bad of ['postgres://u:secretpw@h/db', 'mysql://u:secretpw@h:3306/', 'mysql://u:secretpw@h:3306/bad-name', 'sqlite:', '   ']) {
    assert.throws(
      () => parseDatabaseUrl(bad),
      (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.match(e.message, /POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL/);
        assert.doesNotMatch(e.message, /secretpw/);
        return true;
      },
    );
  }
});

test('redaction hides the password', () => {
  const redacted = redactDatabaseUrl(parseDatabaseUrl('mysql://app:topsecret@127.0.0.1:3306/pc'));
  assert.equal(redacted, 'mysql://app:***@127.0.0.1:3306/pc');
  assert.doesNotMatch(redacted, /topsecret/);
});

test('databaseUrlOf gives worker processes a URL that parses back to the same target', () => {
  for (const raw of ['mysql://app:p%40ss%3Aw%2Fd@db.example:3307/pc', 'mysql://root@127.0.0.1:3306/test', 'sqlite:/var/lib/apsup/run.sqlite']) {
    const target = parseDatabaseUrl(raw);
    assert.deepEqual(parseDatabaseUrl(databaseUrlOf(target)), target);
  }
});
