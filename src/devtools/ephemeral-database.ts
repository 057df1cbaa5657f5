/**
 * Throw-away databases for tests and benchmarks: a temporary SQLite file, or a fresh schema on a
 * MySQL-protocol server (created next to the database named in the admin URL and dropped at
 * cleanup). Never used by the runtime itself.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl, type DatabaseTarget } from '../config/database-url.ts';
import { openMigrationDriver } from '../migrations/drivers.ts';
import { Migrator } from '../migrations/migrator.ts';
import type { Backend } from '../store/types.ts';

export const DEFAULT_MYSQL_ADMIN_URL = 'mysql://root@127.0.0.1:3306/test';

export interface EphemeralDatabase {
  backend: Backend;
  target: DatabaseTarget;
  /** URL form, e.g. for POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL of a child process. */
  url: string;
  drop(): Promise<void>;
}

/**
 * Migrates, then (unless `demo: false`) creates the demo tables the reference families, the
 * reference task handlers and their tests use (they are not part of `migrate up`).
 */
export async function migrateTarget(target: DatabaseTarget, migrationsRoot?: string, options: { demo?: boolean } = {}): Promise<string[]> {
  const driver = await openMigrationDriver(target);
  try {
    return await new Migrator(driver, migrationsRoot).up({ demo: options.demo ?? true });
  } finally {
    await driver.close();
  }
}

export async function createEphemeralDatabase(
  backend: Backend,
  options: { migrate?: boolean; demo?: boolean; mysqlAdminUrl?: string; prefix?: string } = {},
): Promise<EphemeralDatabase> {
  const migrate = options.migrate ?? true;
  const demo = { demo: options.demo ?? true };
  const prefix = options.prefix ?? 'apsup';
  if (backend === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
    const file = path.join(dir, 'db.sqlite');
    const target: DatabaseTarget = { backend: 'sqlite', file };
    if (migrate) await migrateTarget(target, undefined, demo);
    return {
      backend,
      target,
      url: `sqlite:${file}`,
      async drop() {
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const adminUrl = options.mysqlAdminUrl ?? DEFAULT_MYSQL_ADMIN_URL;
  const base = parseDatabaseUrl(adminUrl, 'APSUP_TEST_MYSQL_URL');
  if (base.backend !== 'mysql') throw new Error('the MySQL admin URL must be a mysql:// URL');
  let admin: mysql.Connection;
  try {
    admin = await mysql.createConnection({ host: base.host, port: base.port, user: base.user, password: base.password, database: base.database });
  } catch (error) {
    throw new Error(`MySQL ${base.host}:${base.port} does not answer (${(error as Error).message}); start MariaDB (see .ci/run) or set APSUP_TEST_MYSQL_URL`);
  }
  const database = `${prefix}_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${database} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  const target: DatabaseTarget = { ...base, database };
  if (migrate) {
    try {
      await migrateTarget(target, undefined, demo);
    } catch (error) {
      await admin.query(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
      await admin.end().catch(() => undefined);
      throw error;
    }
  }
  const auth = base.password ? `${encodeURIComponent(base.user)}:${encodeURIComponent(base.password)}` : encodeURIComponent(base.user);
  return {
    backend,
    target,
    url: `mysql://${auth}@${base.host}:${base.port}/${database}`,
    async drop() {
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${database}`);
      } finally {
        await admin.end();
      }
    },
  };
}
