/** A benchmark database: an ephemeral SQLite file or MySQL schema with a store and raw SQL access. */
import { createEphemeralDatabase, type EphemeralDatabase } from '../../src/devtools/ephemeral-database.ts';
import { MysqlStore } from '../../src/store/mysql/mysql-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Backend, Store } from '../../src/store/types.ts';

export interface BackendFixtureLike {
  backend: Backend;
  db: EphemeralDatabase;
  store: Store;
  exec(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export async function openBenchDatabase(backend: Backend): Promise<BackendFixtureLike> {
  const db = await createEphemeralDatabase(backend, { prefix: 'apsup_bench', mysqlAdminUrl: process.env.APSUP_TEST_MYSQL_URL });
  const target = db.target;
  if (target.backend === 'sqlite') {
    const store = SqliteStore.open(target.file);
    return {
      backend,
      db,
      store,
      async exec(sql, params = []) {
        const stmt = store.db.prepare(sql);
        if (stmt.reader) return stmt.all(...params) as Record<string, unknown>[];
        stmt.run(...params);
        return [];
      },
      async close() {
        await store.close();
        await db.drop();
      },
    };
  }
  const store = MysqlStore.open({ host: target.host, port: target.port, user: target.user, password: target.password, database: target.database }, 16);
  return {
    backend,
    db,
    store,
    async exec(sql, params = []) {
      const [rows] = await store.pool.query(sql, params);
      return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
    },
    async close() {
      await store.close();
      await db.drop();
    },
  };
}
