/**
 * Test backends: a temporary SQLite file, and a fresh schema on the local MariaDB per call
 * (APSUP_TEST_MYSQL_URL, default mysql://root@127.0.0.1:3306/test; the database named there is
 * only used to create and drop the per-test schemas). MySQL tests are required: an unreachable
 * server fails them with a clear message instead of skipping them.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl, type DatabaseTarget } from '../../src/config/database-url.ts';
import { openMigrationDriver } from '../../src/migrations/drivers.ts';
import { Migrator } from '../../src/migrations/migrator.ts';
import { MysqlStore } from '../../src/store/mysql/mysql-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Backend, Store } from '../../src/store/types.ts';

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

async function mysqlAdmin(): Promise<mysql.Connection> {
  const base = parseDatabaseUrl(MYSQL_TEST_URL, 'APSUP_TEST_MYSQL_URL');
  if (base.backend !== 'mysql') throw new Error('APSUP_TEST_MYSQL_URL must be a mysql:// URL');
  try {
    return await mysql.createConnection({ host: base.host, port: base.port, user: base.user, password: base.password, database: base.database });
  } catch (error) {
    throw new Error(
      `MySQL tests are required but ${base.host}:${base.port} does not answer (${(error as Error).message}). `
      + 'Start MariaDB (see .ci/run) or set APSUP_TEST_MYSQL_URL.',
    );
  }
}

export async function createBackend(backend: Backend, options: { migrate?: boolean } = {}): Promise<BackendFixture> {
  const migrate = options.migrate ?? true;
  if (backend === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-test-'));
    const file = path.join(dir, 'test.sqlite');
    const target: DatabaseTarget = { backend: 'sqlite', file };
    if (migrate) await migrateTarget(target);
    const store = SqliteStore.open(file);
    const others: SqliteStore[] = [];
    return {
      backend,
      target,
      url: `sqlite:${file}`,
      store,
      openStore() {
        const s = SqliteStore.open(file);
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
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const admin = await mysqlAdmin();
  const base = parseDatabaseUrl(MYSQL_TEST_URL, 'APSUP_TEST_MYSQL_URL') as Extract<DatabaseTarget, { backend: 'mysql' }>;
  const database = `apsup_t_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${database} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  const target: DatabaseTarget = { ...base, database };
  if (migrate) await migrateTarget(target);
  const options_ = { host: base.host, port: base.port, user: base.user, password: base.password, database };
  const store = MysqlStore.open(options_, 12);
  const others: MysqlStore[] = [];
  const auth = base.password ? `${encodeURIComponent(base.user)}:${encodeURIComponent(base.password)}` : encodeURIComponent(base.user);
  return {
    backend,
    target,
    url: `mysql://${auth}@${base.host}:${base.port}/${database}`,
    store,
    openStore() {
      const s = MysqlStore.open(options_, 12);
      others.push(s);
      return s;
    },
    async query(sql, params = []) {
      const [rows] = await (store as MysqlStore).pool.query(sql, params);
      return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
    },
    async cleanup() {
      for (const s of others) await s.close();
      await store.close();
      await admin.query(`DROP DATABASE IF EXISTS ${database}`);
      await admin.end();
    },
  };
}

export async function migrateTarget(target: DatabaseTarget, migrationsRoot?: string): Promise<string[]> {
  const driver = await openMigrationDriver(target);
  try {
    return await new Migrator(driver, migrationsRoot).up();
  } finally {
    await driver.close();
  }
}

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
