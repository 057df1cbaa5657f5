/**
 * What `apsup migrate up` / `down` execute and `apsup migrate sql` prints: the statements of one
 * migration (catalog.ts reads the files and their directives), the procedure installs with their
 * checksum records, and the rendering a DBA runs with the mysql client.
 */
import { splitSqlStatements } from '../sql-split.ts';
import {
  LEDGER_TABLE,
  PROCEDURE_LEDGER_TABLE,
  demoSchemaText,
  directives,
  latestInstallers,
  parseDirectives,
  procedureText,
  sha256,
  verifyPins,
  type MigrationBackend,
  type MigrationFile,
  type PlanContext,
  type PlannedStatement,
} from './catalog.ts';
import { MIGRATIONS_DIR } from '../paths.ts';
import { characteristicsStatement } from './procedure-characteristics.ts';

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
export function procedureInstall(name: string, installedBy: string, proceduresRoot?: string): PlannedStatement[] {
  const text = procedureText(name, proceduresRoot);
  return [
    { sql: `DROP PROCEDURE IF EXISTS ${name}` },
    { sql: text, procedure: name },
    characteristicsStatement(name, text),
    { sql: `DELETE FROM ${PROCEDURE_LEDGER_TABLE} WHERE procedure_name = ${quote(name)}` },
    {
      sql:
        `INSERT INTO ${PROCEDURE_LEDGER_TABLE} (procedure_name, file_checksum, definition_checksum, migration_name, installed_at)\n` +
        `SELECT ${quote(name)}, ${quote(sha256(text))}, SHA2(ROUTINE_DEFINITION, 256), ${quote(installedBy)}, UTC_TIMESTAMP(3)\n` +
        `  FROM information_schema.ROUTINES\n WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME = ${quote(name)}`,
    },
  ];
}

/** Drops a procedure installed by procedureInstall and its checksum record. */
export function procedureRemoval(name: string): PlannedStatement[] {
  return [{ sql: `DROP PROCEDURE IF EXISTS ${name}` }, { sql: `DELETE FROM ${PROCEDURE_LEDGER_TABLE} WHERE procedure_name = ${quote(name)}` }];
}

/** The statements checking the `-- @require` lines of a migration (MySQL/OceanBase). */
export function requirementChecks(migration: MigrationFile): PlannedStatement[] {
  return parseDirectives(migration.up, `${migration.name}.up.sql`)
    .filter((d) => d.kind === 'require')
    .map((d) => ({
      sql: 'SELECT @@character_set_database AS database_charset',
      check: {
        expect: d.value!,
        message:
          `migration ${migration.name} requires the database default character set ${d.value} (procedure parameters and variables ` +
          `take it at CREATE PROCEDURE time; see procedures/oceanbase/COMPATIBILITY.md): ALTER DATABASE <name> CHARACTER SET ${d.value} COLLATE ${d.value}_bin, then migrate again`,
      },
    }));
}

/** The procedures the migrations before `migration` install (adoption's on-demand ones are not). */
function installedBefore(migration: MigrationFile, context: PlanContext): string[] {
  const earlier = (context.files ?? []).filter((f) => f.name < migration.name);
  return [...latestInstallers(earlier).keys()].sort();
}

/** The guarded DROPs of a migration's `-- @drop-table-if-empty` lines, in line order. */
export function conditionalDrops(migration: MigrationFile): PlannedStatement[] {
  return parseDirectives(migration.up, `${migration.name}.up.sql`)
    .filter((d) => d.kind === 'drop-table-if-empty')
    .map((d) => ({ sql: `DROP TABLE ${d.name}`, onlyIfEmpty: d.name }));
}

export function planUp(backend: MigrationBackend, migration: MigrationFile, context: PlanContext = {}): PlannedStatement[] {
  if (backend === 'sqlite') {
    return [
      { sql: migration.up.trim() },
      ...conditionalDrops(migration),
      {
        sql: `INSERT INTO ${LEDGER_TABLE} (name, checksum, applied_at) VALUES (${quote(migration.name)}, ${quote(migration.checksum)}, strftime('%Y-%m-%d %H:%M:%f', 'now'))`,
      },
    ];
  }
  verifyPins(migration, context);
  // Requirements first, then tables, then the procedures that use them.
  const plan: PlannedStatement[] = [...requirementChecks(migration)];
  for (const sql of splitSqlStatements(migration.up)) plan.push({ sql });
  plan.push(...conditionalDrops(migration));
  if (parseDirectives(migration.up).some((d) => d.kind === 'procedure-characteristics')) {
    for (const name of installedBefore(migration, context)) plan.push(characteristicsStatement(name, procedureText(name, context.proceduresRoot)));
  }
  for (const name of directives(migration.up, 'procedure')) plan.push(...procedureInstall(name, migration.name, context.proceduresRoot));
  plan.push({
    sql: `INSERT INTO ${LEDGER_TABLE} (name, checksum, applied_at) VALUES (${quote(migration.name)}, ${quote(migration.checksum)}, UTC_TIMESTAMP(3))`,
  });
  return plan;
}

export function planDown(backend: MigrationBackend, migration: MigrationFile): PlannedStatement[] {
  if (migration.down === null) throw new Error(`migration ${migration.name} has no down file and cannot be reverted`);
  if (backend === 'sqlite') {
    return [{ sql: migration.down.trim() }, { sql: `DELETE FROM ${LEDGER_TABLE} WHERE name = ${quote(migration.name)}` }];
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
    } else if (statement.onlyIfEmpty) {
      lines.push(
        `-- only when ${statement.onlyIfEmpty} exists and SELECT 1 FROM ${statement.onlyIfEmpty} LIMIT 1 returns no row (a table holding rows is kept):`,
        `${statement.sql};`,
      );
    } else if (statement.check) {
      lines.push(`-- stop unless this returns ${statement.check.expect}:`, `${statement.sql};`);
    } else if (backend === 'sqlite' && /;\s*$/.test(statement.sql)) {
      lines.push(statement.sql);
    } else {
      lines.push(`${statement.sql};`);
    }
  }
  return lines.join('\n');
}

/** `apsup start` / `migrate up --with-demo`: creates the missing demo tables (idempotent). */
export function demoSchemaPlan(backend: MigrationBackend, root: string = MIGRATIONS_DIR): PlannedStatement[] {
  const text = demoSchemaText(backend, root);
  return backend === 'sqlite' ? [{ sql: text.trim() }] : splitSqlStatements(text).map((sql) => ({ sql }));
}
