// Issue 12 item 5: SQLite durability is one validated setting (SQLITE_SYNCHRONOUS, NORMAL default,
// FULL) and it reaches every SQLite connection the runtime opens: the host's store, the provider
// reader process, each worker's commit connection and read handle, and each task attempt's
// (apsup tasks worker) commit connection and read handle, checked with pragma_synchronous from
// those connections. Both values are run: SQLite's own defaults differ per connection kind
// (2 for a fresh read-write connection, 1 for a read-only one here), so either value alone would
// let a connection that ignores the setting pass.
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { ConfigError } from '../../src/config/database-url.ts';
import { parseRuntimeConfig } from '../../src/config/runtime-config.ts';
import type { ProviderContext } from '../../src/registry/registration.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { SqliteProcessReadHandle } from '../../src/store/sqlite/sqlite-read-process.ts';
import { SqliteReadHandle } from '../../src/store/sqlite/sqlite-read-handle.ts';
import { SqliteStore, openSqliteDatabase } from '../../src/store/sqlite/sqlite-store.ts';
import { SQLITE_SYNCHRONOUS_VARIABLE as V, parseSqliteSynchronous } from '../../src/store/sqlite/synchronous.ts';
import { createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { bindingOf, startRuntime, testFamily } from '../fixtures/runtime-harness.ts';
import { killChildren, runCli, startCli, stopChild } from '../tasks/harness.ts';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'durability');
const PROCESSOR = path.join(DIR, 'pragma.processor.ts');
const TASKS = path.join(DIR, 'tasks.ts');
const SQL = 'SELECT synchronous AS v FROM pragma_synchronous';
const LEVEL = { NORMAL: 1, FULL: 2 } as const;

function withSetting<T>(value: string | undefined, fn: () => Promise<T>): Promise<T> {
  const before = process.env[V];
  if (value === undefined) delete process.env[V];
  else process.env[V] = value;
  return fn().finally(() => {
    if (before === undefined) delete process.env[V];
    else process.env[V] = before;
  });
}

describe('SQLite synchronous setting', () => {
  const fixtures: BackendFixture[] = [];
  after(async () => {
    killChildren();
    for (const fx of fixtures) await fx.cleanup();
  });

  test('NORMAL by default, FULL selectable (any case); anything else is refused naming the variable', () => {
    assert.equal(parseSqliteSynchronous(undefined), 'NORMAL');
    assert.equal(parseSqliteSynchronous('  '), 'NORMAL');
    assert.equal(parseSqliteSynchronous('full'), 'FULL');
    assert.equal(parseSqliteSynchronous('Normal'), 'NORMAL');
    for (const bad of ['OFF', 'EXTRA', '2', 'FULLY']) {
      assert.throws(
        () => parseSqliteSynchronous(bad),
        (e: unknown) => e instanceof ConfigError && e.message === `${V} must be NORMAL or FULL (got ${JSON.stringify(bad)})`,
      );
    }
    assert.throws(
      () => parseRuntimeConfig({ [V]: 'OFF' }, []),
      (e: unknown) => e instanceof ConfigError && e.message.startsWith(`${V} must be NORMAL or FULL`),
    );
    const config = parseRuntimeConfig({ [V]: 'full' }, []);
    assert.equal(config.sqliteSynchronous, 'FULL');
    assert.deepEqual(config.unknownVariables, [], 'the variable is a known setting');
    assert.equal(parseRuntimeConfig({}, []).sqliteSynchronous, 'NORMAL');
  });

  for (const setting of ['NORMAL', 'FULL'] as const) {
    test(`${setting}: every kind of SQLite connection opened in a process reports it`, async () => {
      const fx = await createBackend('sqlite');
      fixtures.push(fx);
      const file = (fx.target as { file: string }).file;
      await withSetting(setting === 'NORMAL' ? undefined : setting, async () => {
        const plain = openSqliteDatabase(file);
        const store = SqliteStore.open(file);
        const host = SqliteStore.openHost(file);
        const read = SqliteReadHandle.open(file);
        const reader = new SqliteProcessReadHandle(file);
        try {
          assert.equal(plain.pragma('synchronous', { simple: true }), LEVEL[setting]);
          assert.equal(store.db.pragma('synchronous', { simple: true }), LEVEL[setting]);
          assert.equal(host.db.pragma('synchronous', { simple: true }), LEVEL[setting]);
          assert.deepEqual(await read.query(SQL), [{ v: LEVEL[setting] }]);
          assert.deepEqual(await reader.query(SQL), [{ v: LEVEL[setting] }]);
        } finally {
          plain.close();
          await store.close();
          await host.close();
          await read.close();
          await reader.close();
        }
      });
    });

    test(`${setting}: the runtime host, its workers, the provider reader and task attempts all run with it`, async () => {
      const fx = await createBackend('sqlite');
      fixtures.push(fx);
      await fx.query('CREATE TABLE fx_sync (source TEXT NOT NULL, scope_id TEXT NOT NULL, value INTEGER NOT NULL, pid INTEGER NOT NULL)');
      let runtime: Runtime | undefined;
      await withSetting(setting, async () => {
        let provider: number | null = null;
        const family = testFamily('fx-sync', { processorModule: PROCESSOR, schedule: { kind: 'interval', seconds: 1 } });
        family.pendingWork = {
          async remarkDirty(ctx: ProviderContext) {
            provider ??= Number((await ctx.query(SQL))[0]?.v);
            return 0;
          },
        };
        const worker = startCli(fx, ['tasks', 'worker'], { POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: TASKS });
        try {
          // The runtime takes the setting from its configuration (as `apsup run` reads it from its environment).
          runtime = await startRuntime(fx, [family], { env: { [V]: setting } });
          await runtime.store.markDirty(bindingOf('fx-sync'), 's1');
          runtime.notifyDirty('fx-sync');
          const submitted = await runCli(fx, ['tasks', 'submit', 'fx-pragma', '--payload', '{}'], { POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: TASKS });
          assert.equal(submitted.code, 0, submitted.stderr);
          const rows = (await waitFor(async () => {
            const r = await fx.query('SELECT source, value, pid FROM fx_sync ORDER BY source');
            return r.length >= 4 ? r : null;
          }, 30_000))!;
          const seen = Object.fromEntries(rows.map((r) => [String(r.source), Number(r.value)]));
          assert.deepEqual(seen, {
            'task-commit': LEVEL[setting],
            'task-read': LEVEL[setting],
            'worker-commit': LEVEL[setting],
            'worker-read': LEVEL[setting],
          });
          assert.ok(
            rows.every((r) => Number(r.pid) !== process.pid),
            'recorded by child processes',
          );
          assert.equal((runtime.store as SqliteStore).db.pragma('synchronous', { simple: true }), LEVEL[setting], 'the host store');
          assert.equal(await waitFor(() => provider, 20_000), LEVEL[setting], 'the provider reader process');
        } finally {
          await runtime?.stop();
          await stopChild(worker);
        }
      });
    });
  }
});
