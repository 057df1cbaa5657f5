/**
 * The migration files (append-only, plain SQL, one folder per backend) and what each one runs.
 *   migrations/sqlite/NNNN_name.up.sql | .down.sql      executed whole in one BEGIN IMMEDIATE
 *   migrations/oceanbase/NNNN_name.up.sql | .down.sql   split into statements; a line
 *     `-- @procedure <name>` installs procedures/oceanbase/<name>.sql (DROP IF EXISTS + CREATE)
 *     and records its checksums; `-- @drop-procedure <name>` drops one.
 * The plan below is both what `apsup migrate up` executes and what `apsup migrate sql` prints.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR, PROCEDURES_DIR } from '../paths.ts';
import { splitSqlStatements } from '../sql-split.ts';

export type MigrationBackend = 'sqlite' | 'oceanbase';

export interface MigrationFile {
  name: string;
  up: string;
  down: string | null;
  checksum: string;
}

export interface PlannedStatement {
  sql: string;
  /** Set when the statement is a whole CREATE PROCEDURE (printed between DELIMITER lines). */
  procedure?: string;
}

export const LEDGER_TABLE = 'pc_aps_schema_migrations';
export const PROCEDURE_LEDGER_TABLE = 'pc_aps_procedure_checksums';
const NAME = /^\d{4}_[a-z0-9_]+$/;
const PROCEDURE_NAME = /^pc_[a-z0-9_]+$/;

export function sha256(text: string): string {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

export function listMigrations(backend: MigrationBackend, root = MIGRATIONS_DIR): MigrationFile[] {
  const dir = path.join(root, backend);
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.up.sql')).sort();
  return files.map((file) => {
    const name = file.slice(0, -'.up.sql'.length);
    if (!NAME.test(name)) throw new Error(`migrations/${backend}/${file}: name must look like 0001_some_name.up.sql`);
    const up = fs.readFileSync(path.join(dir, file), 'utf8');
    const downPath = path.join(dir, `${name}.down.sql`);
    const down = fs.existsSync(downPath) ? fs.readFileSync(downPath, 'utf8') : null;
    return { name, up, down, checksum: sha256(up) };
  });
}

export function procedureText(name: string): string {
  if (!PROCEDURE_NAME.test(name)) throw new Error(`invalid procedure name ${JSON.stringify(name)}`);
  return fs.readFileSync(path.join(PROCEDURES_DIR, `${name}.sql`), 'utf8').trim();
}

export function listProcedureFiles(): string[] {
  return fs.readdirSync(PROCEDURES_DIR).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4)).sort();
}

export function directives(text: string, directive: string): string[] {
  const pattern = new RegExp(`^--\\s*@${directive}\\s+([A-Za-z0-9_]+)\\s*$`, 'gm');
  return [...text.matchAll(pattern)].map((m) => m[1]);
}

export function ledgerBootstrap(backend: MigrationBackend): string[] {
  if (backend === 'sqlite') {
    return [
      `CREATE TABLE IF NOT EXISTS ${LEDGER_TABLE} (\n  name TEXT NOT NULL PRIMARY KEY,\n  checksum TEXT NOT NULL,\n  applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))\n)`,
    ];
  }
  return [
    `CREATE TABLE IF NOT EXISTS ${LEDGER_TABLE} (\n  name VARCHAR(191) NOT NULL PRIMARY KEY,\n  checksum CHAR(64) NOT NULL,\n  applied_at DATETIME(3) NOT NULL\n) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin`,
    `CREATE TABLE IF NOT EXISTS ${PROCEDURE_LEDGER_TABLE} (\n  procedure_name VARCHAR(64) NOT NULL PRIMARY KEY,\n  file_checksum CHAR(64) NOT NULL,\n  definition_checksum CHAR(64) NULL,\n  migration_name VARCHAR(191) NOT NULL,\n  installed_at DATETIME(3) NOT NULL\n) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin`,
  ];
}

function quote(value: string): string {
  if (!/^[A-Za-z0-9_:]+$/.test(value)) throw new Error(`refusing to inline ${JSON.stringify(value)}`);
  return `'${value}'`;
}

/** (Re)installs one procedure from its file and records its file and body checksums. */
export function procedureInstall(name: string, installedBy: string): PlannedStatement[] {
  const text = procedureText(name);
  return [
    { sql: `DROP PROCEDURE IF EXISTS ${name}` },
    { sql: text, procedure: name },
    { sql: `DELETE FROM ${PROCEDURE_LEDGER_TABLE} WHERE procedure_name = ${quote(name)}` },
    {
      sql: `INSERT INTO ${PROCEDURE_LEDGER_TABLE} (procedure_name, file_checksum, definition_checksum, migration_name, installed_at)\n`
        + `SELECT ${quote(name)}, ${quote(sha256(text))}, SHA2(ROUTINE_DEFINITION, 256), ${quote(installedBy)}, UTC_TIMESTAMP(3)\n`
        + `  FROM information_schema.ROUTINES\n WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME = ${quote(name)}`,
    },
  ];
}

/** Drops a procedure installed by procedureInstall and its checksum record. */
export function procedureRemoval(name: string): PlannedStatement[] {
  return [
    { sql: `DROP PROCEDURE IF EXISTS ${name}` },
    { sql: `DELETE FROM ${PROCEDURE_LEDGER_TABLE} WHERE procedure_name = ${quote(name)}` },
  ];
}

export function planUp(backend: MigrationBackend, migration: MigrationFile): PlannedStatement[] {
  if (backend === 'sqlite') {
    return [
      { sql: migration.up.trim() },
      { sql: `INSERT INTO ${LEDGER_TABLE} (name, checksum, applied_at) VALUES (${quote(migration.name)}, ${quote(migration.checksum)}, strftime('%Y-%m-%d %H:%M:%f', 'now'))` },
    ];
  }
  // Tables first, then the procedures that use them.
  const plan: PlannedStatement[] = [];
  for (const sql of splitSqlStatements(migration.up)) plan.push({ sql });
  for (const name of directives(migration.up, 'procedure')) plan.push(...procedureInstall(name, migration.name));
  plan.push({ sql: `INSERT INTO ${LEDGER_TABLE} (name, checksum, applied_at) VALUES (${quote(migration.name)}, ${quote(migration.checksum)}, UTC_TIMESTAMP(3))` });
  return plan;
}

export function planDown(backend: MigrationBackend, migration: MigrationFile): PlannedStatement[] {
  if (migration.down === null) throw new Error(`migration ${migration.name} has no down file and cannot be reverted`);
  if (backend === 'sqlite') {
    return [
      { sql: migration.down.trim() },
      { sql: `DELETE FROM ${LEDGER_TABLE} WHERE name = ${quote(migration.name)}` },
    ];
  }
  const plan: PlannedStatement[] = [];
  for (const name of directives(migration.down, 'drop-procedure')) {
    plan.push({ sql: `DROP PROCEDURE IF EXISTS ${name}` });
    plan.push({ sql: `DELETE FROM ${PROCEDURE_LEDGER_TABLE} WHERE procedure_name = ${quote(name)}` });
  }
  for (const sql of splitSqlStatements(migration.down)) plan.push({ sql });
  plan.push({ sql: `DELETE FROM ${LEDGER_TABLE} WHERE name = ${quote(migration.name)}` });
  return plan;
}

/** Renders a plan as a script a DBA can read and run (mysql client: DELIMITER around procedures). */
export function renderPlan(backend: MigrationBackend, title: string, plan: PlannedStatement[]): string {
  const lines: string[] = [`-- ${title}`];
  for (const statement of plan) {
    if (statement.procedure) {
      lines.push('DELIMITER //', statement.sql, '//', 'DELIMITER ;');
    } else if (backend === 'sqlite' && /;\s*$/.test(statement.sql)) {
      lines.push(statement.sql);
    } else {
      lines.push(`${statement.sql};`);
    }
  }
  return lines.join('\n');
}
