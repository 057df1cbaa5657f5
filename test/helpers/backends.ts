/**
 * Test backends: a temporary SQLite file, and a fresh schema on the local MariaDB per call
 * (APSUP_TEST_MYSQL_URL, default mysql://root@127.0.0.1:3306/test; the database named there is
 * only used to create and drop the per-test schemas). MySQL tests are required: an unreachable
 * server fails them with a clear message instead of skipping them.
 */
import type { DatabaseTarget } from '../../src/config/database-url.ts';
import { createEphemeralDatabase, migrateTarget } from '../../src/devtools/ephemeral-database.ts';
import { MysqlStore } from '../../src/store/mysql/mysql-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Backend, Store } from '../../src/store/types.ts';
import { createMigratedDatabase } from './template-db.ts';

export const BACKENDS: Backend[] = ['sqlite', 'mysql'];

export const MYSQL_TEST_URL = process.env.APSUP_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

export interface BackendFixture {
  backend: Backend;
  target: DatabaseTarget;
  /** The URL form for POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL (child processes). */
  url: string;
  store: Store;
  /** Opens another, independent store on the same database (a second connection/pool). */
  openStore(): Store;
  /** Runs raw SQL for assertions only (never to change state behind the operations' back, unless a test says so). */
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  cleanup(): Promise<void>;
}

export async function createBackend(backend: Backend, options: { migrate?: boolean } = {}): Promise<BackendFixture> {
  // A migrated database is a copy of the run's template (test/helpers/template-db.ts);
  // APSUP_TEST_TEMPLATE=0 migrates each one from scratch instead.
  const fromTemplate = options.migrate !== false && process.env.APSUP_TEST_TEMPLATE !== '0';
  const db = fromTemplate
    ? await createMigratedDatabase(backend, { mysqlAdminUrl: MYSQL_TEST_URL, prefix: 'apsup_t' })
    : await createEphemeralDatabase(backend, { migrate: options.migrate, mysqlAdminUrl: MYSQL_TEST_URL, prefix: 'apsup_t' });
  const target = db.target;
  if (target.backend === 'sqlite') {
    const store = SqliteStore.open(target.file);
    const others: SqliteStore[] = [];
    return {
      backend,
      target,
      url: db.url,
      store,
      openStore() {
        const s = SqliteStore.open(target.file);
        others.push(s);
        return s;
      },
      async query(sql, params = []) {
        const stmt = store.db.prepare(sql);
        return stmt.reader ? (stmt.all(...params) as Record<string, unknown>[]) : (stmt.run(...params), []);
      },
      async cleanup() {
        for (const s of others) await s.close();
        await store.close();
        await db.drop();
      },
    };
  }
  const { host, port, user, password, database } = target;
  const store = MysqlStore.open({ host, port, user, password, database }, 12);
  const others: MysqlStore[] = [];
  return {
    backend,
    target,
    url: db.url,
    store,
    openStore() {
      const s = MysqlStore.open({ host, port, user, password, database }, 12);
      others.push(s);
      return s;
    },
    async query(sql, params = []) {
      const [rows] = await store.pool.query(sql, params);
      return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
    },
    async cleanup() {
      for (const s of others) await s.close();
      await store.close();
      await db.drop();
    },
  };
}

export { migrateTarget };

/** Polls until check() is truthy, failing after timeoutMs. Tests never sleep for a fixed time to wait for behaviour. */
export async function waitFor<T>(check: () => Promise<T> | T, timeoutMs = 10_000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export function term(supervisorKey: string, holderId: string, supervisorGeneration: number) {
  return { supervisorKey, holderId, supervisorGeneration };
}
