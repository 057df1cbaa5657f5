// The host's store takes its settings from the parsed configuration, not from the process's
// environment (issue 15 item 1: one configuration), and gives them to its worker processes.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import { Runtime } from '../../src/runtime/runtime.ts';
import type { MysqlStore } from '../../src/store/mysql/mysql-store.ts';
import { transactionBoundFromEnv } from '../../src/store/mysql/transaction-bound.ts';
import { hostStoreEnv } from '../../src/store/open.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { sqliteSynchronous } from '../../src/store/sqlite/synchronous.ts';
import { runtimeConfig } from '../fixtures/runtime-harness.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';

const P = 'POWERCONTEXT_SERVER_RUNTIME_';

test('worker processes receive the same settings in their environment', () => {
  for (const settings of [
    { sqliteSynchronous: 'FULL' as const, transactionBoundMs: 4500 },
    { sqliteSynchronous: 'NORMAL' as const, transactionBoundMs: 15_000 },
  ]) {
    const env = hostStoreEnv(settings);
    assert.equal(sqliteSynchronous(env), settings.sqliteSynchronous);
    assert.equal(transactionBoundFromEnv(env), settings.transactionBoundMs);
  }
});

for (const backend of BACKENDS) {
  describe(`the host store's settings (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    const runtimes: Runtime[] = [];
    after(async () => {
      for (const r of runtimes.splice(0)) await r.stop();
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });

    test('come from the configuration the runtime was given, whatever this process environment says', async () => {
      assert.equal(process.env[`${P}SQLITE_SYNCHRONOUS`], undefined, 'precondition: unset in this process');
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const env = { [`${P}SQLITE_SYNCHRONOUS`]: 'FULL', [`${P}ARTIFACT_PROCESSING_LEASE_TTL_SECONDS`]: '4', [`${P}ARTIFACT_PROCESSING_RENEW_SECONDS`]: '1' };
      // Built, not started: only its store is looked at.
      const runtime = new Runtime(runtimeConfig(fx, [], env), createLogger({ level: 'silent' }));
      runtimes.push(runtime);
      if (backend === 'sqlite') {
        assert.equal((runtime.store as SqliteStore).db.pragma('synchronous', { simple: true }), 2, 'FULL');
      } else {
        assert.equal((runtime.store as MysqlStore).transactionBoundMs, 4000, 'one lease TTL');
      }
    });
  });
}
