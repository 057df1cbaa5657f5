/**
 * The database of one trial: a fresh migrated SQLite file or MariaDB schema (the ephemeral
 * database helper), the suite's tables, and the driver's own store on it. `exec` runs raw SQL
 * for the suite's tables and for the checker's reads.
 */
import Database from 'better-sqlite3';
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
  /**
   * Runs fn with an exec whose reads all see one committed state (a read transaction: SQLite's
   * WAL snapshot, MySQL's REPEATABLE READ consistent snapshot on one connection), so a checker
   * reading row after row cannot see a commit halfway (run 2, seed fae82c0d-11).
   */
  snapshot<T>(fn: (exec: Exec) => Promise<T>): Promise<T>;
  cleanup(): Promise<void>;
}

export async function openTrialDb(backend: Backend): Promise<TrialDb> {
  const db = await createEphemeralDatabase(backend, { mysqlAdminUrl: MYSQL_ADMIN_URL, prefix: 'apsup_chaos' });
  const target = db.target;
  let store: Store;
  let exec: Exec;
  let snapshot: TrialDb['snapshot'];
  let name: string;
  if (target.backend === 'sqlite') {
    const s = SqliteStore.open(target.file);
    store = s;
    name = target.file;
    exec = async (sql, params = []) => {
      const stmt = s.db.prepare(sql);
      return stmt.reader ? (stmt.all(...params) as Record<string, unknown>[]) : (stmt.run(...params), []);
    };
    // A reader connection of its own: the store's connection may be inside a write elsewhere.
    snapshot = async (fn) => {
      const reader = new Database(target.file, { readonly: true });
      try {
        reader.exec('BEGIN');
        return await fn(async (sql, params = []) => reader.prepare(sql).all(...params) as Record<string, unknown>[]);
      } finally {
        try {
          reader.exec('COMMIT');
        } catch {
          /* ended */
        }
        reader.close();
      }
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
    snapshot = async (fn) => {
      const conn = await s.pool.getConnection();
      try {
        await conn.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
        await conn.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
        return await fn(async (sql, params = []) => {
          const [rows] = await conn.query(sql, params);
          return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
        });
      } finally {
        await conn.query('COMMIT').catch(() => undefined);
        conn.release();
      }
    };
  }
  await createSuiteSchema(backend, exec);
  return {
    backend,
    url: db.url,
    name,
    store,
    exec,
    snapshot,
    async cleanup() {
      await store.close().catch(() => undefined);
      await db.drop();
    },
  };
}
