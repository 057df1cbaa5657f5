// What a worker child inherits (src/runtime/child-database.ts): none of the host's secrets (its
// database URL, the console token, the wake-up channel), and its own database part last.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childBaseEnv, childDatabaseOf, childEnvOf } from '../../src/runtime/child-database.ts';

test("a child's environment carries no host secret and the pool's URL wins", () => {
  const host = {
    PATH: '/usr/bin',
    POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: 'mysql://root:admin@db/apsup',
    POWERCONTEXT_SERVER_RUNTIME_CONSOLE_TOKEN: 'operator-token-0123456789',
    POWERCONTEXT_SERVER_RUNTIME_NOTIFY_REDIS_URL: 'redis://:pw@r:6379/0',
    POWERCONTEXT_SERVER_RUNTIME_READER_DATABASE_URL: 'mysql://r:x@db/apsup',
    POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: '3',
  };
  const env = { ...childBaseEnv(host), ...childEnvOf(childDatabaseOf('mysql://p:x@db/apsup')) };
  assert.equal(env.PATH, '/usr/bin');
  assert.equal(env.POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_LEASE_TTL_SECONDS, '3');
  assert.equal(env.POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL, 'mysql://p:x@db/apsup');
  for (const k of [
    'POWERCONTEXT_SERVER_RUNTIME_CONSOLE_TOKEN',
    'POWERCONTEXT_SERVER_RUNTIME_NOTIFY_REDIS_URL',
    'POWERCONTEXT_SERVER_RUNTIME_READER_DATABASE_URL',
  ]) {
    assert.equal(env[k], undefined, k);
  }
  assert.ok(!JSON.stringify(env).includes('admin'));
});
