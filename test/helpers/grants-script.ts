/**
 * ops/mysql-grants.sql as a DBA runs it, for the tests: the schema, account names and passwords
 * substituted, split into its three parts (before the migrations, after them, the demo tables).
 */
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.ts';
import { splitSqlStatements } from '../../src/sql-split.ts';

export const GRANTS_FILE = path.join(PACKAGE_ROOT, 'ops', 'mysql-grants.sql');
export const ROLES = ['owner', 'runtime', 'processor', 'reader'] as const;
export type Role = (typeof ROLES)[number];
const SHORT: Record<Role, string> = { owner: 'o', runtime: 'rt', processor: 'p', reader: 'rd' };

export const userFor = (role: Role, suffix: string) => `apsup_${SHORT[role]}_${suffix}`;

export function grantScript(db: string, suffix: string, password: string): { setup: string[]; afterMigrations: string[]; demo: string[] } {
  const text = fs
    .readFileSync(GRANTS_FILE, 'utf8')
    .replace(/\bapsup(?=[.\s])/g, db)
    .replace(/apsup_(owner|runtime|processor|reader)/g, (_, role: Role) => userFor(role, suffix))
    .replace(/change-me-(owner|runtime|processor|reader)/g, password);
  const [setup, rest] = text.split('-- @after-migrations');
  const [afterMigrations, demo] = (rest ?? '').split('-- @demo-begin');
  const statements = (t: string | undefined) =>
    splitSqlStatements(t ?? '')
      .map((s) => s.replace(/^(\s*--[^\n]*\n)+/g, '').trim())
      .filter((s) => s !== '');
  return { setup: statements(setup), afterMigrations: statements(afterMigrations), demo: statements(demo) };
}

export interface DocumentedDatabase {
  db: string;
  /** mysql:// URL of one of the accounts. */
  url(role: Role): string;
  /** The runtime's settings (short names): its own URL and the processor and reader URLs. */
  runtimeVars(): Record<string, string>;
  /** As the administrator, on the new schema. */
  query(sql: string, params?: unknown[]): Promise<unknown[]>;
  /** A business table: created by the administrator, granted as the file's example lines say. */
  addBusinessTable(name: string, ddl: string): Promise<void>;
  cleanup(): Promise<void>;
}

/** A new schema with the four documented accounts, migrated by the owner (demo tables optional). */
export async function documentedDatabase(adminUrl: string, options: { demo?: boolean } = {}): Promise<DocumentedDatabase> {
  const { default: mysql } = await import('mysql2/promise');
  const { parseDatabaseUrl } = await import('../../src/config/database-url.ts');
  const { openMigrationDriver } = await import('../../src/migrations/drivers.ts');
  const { Migrator } = await import('../../src/migrations/migrator.ts');
  const base = parseDatabaseUrl(adminUrl, 'APSUP_TEST_MYSQL_URL');
  if (base.backend !== 'mysql') throw new Error('a MySQL admin URL is needed');
  const suffix = (await import('node:crypto')).randomBytes(3).toString('hex');
  const db = `apsup_doc_${suffix}`;
  const password = `pw-${suffix}`;
  const { setup, afterMigrations, demo } = grantScript(db, suffix, password);
  const root = await mysql.createConnection({ host: base.host, port: base.port, user: base.user, password: base.password, database: base.database });
  for (const sql of setup) await root.query(sql);
  await root.query(`USE \`${db}\``);
  const driver = await openMigrationDriver({ ...base, database: db, user: userFor('owner', suffix), password });
  try {
    await new Migrator(driver).up({ demo: options.demo });
  } finally {
    await driver.close();
  }
  for (const sql of [...afterMigrations, ...(options.demo ? demo : [])]) await root.query(sql);
  const url = (role: Role) => `mysql://${userFor(role, suffix)}:${password}@${base.host}:${base.port}/${db}`;
  return {
    db,
    url,
    runtimeVars: () => ({ DATABASE_URL: url('runtime'), PROCESSOR_DATABASE_URL: url('processor'), READER_DATABASE_URL: url('reader') }),
    async query(sql, params = []) {
      const [rows] = await root.query(sql, params);
      return Array.isArray(rows) ? rows : [];
    },
    async addBusinessTable(name, ddl) {
      await root.query(ddl);
      await root.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON \`${db}\`.\`${name}\` TO '${userFor('processor', suffix)}'@'%'`);
      await root.query(`GRANT SELECT ON \`${db}\`.\`${name}\` TO '${userFor('reader', suffix)}'@'%'`);
    },
    async cleanup() {
      await root.query(`DROP DATABASE IF EXISTS \`${db}\``);
      for (const role of ROLES) await root.query(`DROP USER IF EXISTS '${userFor(role, suffix)}'@'%'`);
      await root.end();
    },
  };
}
