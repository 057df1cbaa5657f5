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
