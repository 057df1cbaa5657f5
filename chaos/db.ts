/**
 * The database of one trial: a fresh migrated SQLite file or MariaDB schema (the ephemeral
 * database helper), the suite's tables, and the driver's own store on it. `exec` runs raw SQL
 * for the suite's tables and for the checker's reads.
 */
import { createEphemeralDatabase } from '../src/devtools/ephemeral-database.ts';
import { MysqlStore } from '../src/store/mysql/mysql-store.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Backend, Store } from '../src/store/types.ts';
import { createSuiteSchema, type Exec } from './schema.ts';

export const MYSQL_ADMIN_URL = process.env.APSUP_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

export interface TrialDb {
  backend: Backend;
  url: string;
  /** MySQL schema name (for the processlist), or the SQLite file. */
  name: string;
  store: Store;
  exec: Exec;
  cleanup(): Promise<void>;
}

export async function openTrialDb(backend: Backend): Promise<TrialDb> {
  const db = await createEphemeralDatabase(backend, { mysqlAdminUrl: MYSQL_ADMIN_URL, prefix: 'apsup_chaos' });
  const target = db.target;
  let store: Store;
  let exec: Exec;
  let name: string;
  if (target.backend === 'sqlite') {
    const s = SqliteStore.open(target.file);
    store = s;
    name = target.file;
    exec = async (sql, params = []) => {
      const stmt = s.db.prepare(sql);
      return stmt.reader ? (stmt.all(...params) as Record<string, unknown>[]) : (stmt.run(...params), []);
    };
  } else {
    const { host, port, user, password, database } = target;
    const s = MysqlStore.open({ host, port, user, password, database }, 4);
    store = s;
    name = database;
    exec = async (sql, params = []) => {
      const [rows] = await s.pool.query(sql, params);
      return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
    };
  }
  await createSuiteSchema(backend, exec);
  return {
    backend, url: db.url, name, store, exec,
    async cleanup() {
      await store.close().catch(() => undefined);
      await db.drop();
    },
  };
}
