/**
 * The migration files (append-only, plain SQL, one folder per backend) and what each one runs.
 *   migrations/sqlite/NNNN_name.up.sql | .down.sql      executed whole in one BEGIN IMMEDIATE
 *   migrations/oceanbase/NNNN_name.up.sql | .down.sql   split into statements; directive lines:
 *     `-- @procedure <name> sha256=<hex>`  installs procedures/oceanbase/<name>.sql, or
 *        procedures/oceanbase/internal/<name>.sql for a MySQL-only internal procedure (DROP IF EXISTS
 *        + CREATE) and records its checksums. The pin is the sha256sum of the file: the migration
 *        that names a procedure LAST must pin the file as it is (else `up`/`sql` refuse); an older
 *        pin superseded by a later install is tolerated when a fresh database replays the chain.
 *        (`-- @procedure <name>` without a pin: migrations 0002-0010, written before pins.)
 *     `-- @drop-procedure <name>`           drops one (down files).
 *     `-- @require database_charset=<cs>`   refuses the migration (before any pending one runs)
 *        unless the database default character set is <cs>.
 *     `-- @procedure-characteristics all-installed`  applies the COMMENT and SQL SECURITY
 *        (procedure-characteristics.ts) to every procedure the earlier migrations installed.
 *   Both backends:
 *     `-- @drop-table-if-empty <table>`     drops the table only when it exists and holds no rows
 *        (checked right before the DROP): a table holding data is kept, never dropped silently.
 *   Any other `-- @...` line is an error, never ignored.
 *   migrations/<backend>/CHECKSUMS locks every migration file (scripts/lock-migrations.mjs).
 * The plan below is both what `apsup migrate up` executes and what `apsup migrate sql` prints.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR, PROCEDURES_DIR } from '../paths.ts';

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
  /** A read whose first value must equal `expect`; otherwise the plan stops with `message`. */
  check?: { expect: string; message: string };
  /** Run only when this table exists and holds no rows (`-- @drop-table-if-empty`). */
  onlyIfEmpty?: string;
}

/** A migration the database or the files refuse (drift, a stale pin, a failed requirement). */
export class MigrationDriftError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationDriftError';
  }
}

export interface Directive {
  kind: 'procedure' | 'drop-procedure' | 'require' | 'drop-table-if-empty' | 'procedure-characteristics';
  /** Procedure name, or the requirement name (database_charset). */
  name: string;
  /** procedure: the sha256 pin (null for the unpinned legacy form); require: the required value. */
  value: string | null;
  line: number;
}

export const LEDGER_TABLE = 'pc_aps_schema_migrations';
export const PROCEDURE_LEDGER_TABLE = 'pc_aps_procedure_checksums';
const NAME = /^\d{4}_[a-z0-9_]+$/;
const PROCEDURE_NAME = /^pc_[a-z0-9_]+$/;

export function sha256(text: string): string {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

export function listMigrations(backend: MigrationBackend, root: string = MIGRATIONS_DIR): MigrationFile[] {
  const dir = path.join(root, backend);
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.up.sql'))
    .sort();
  return files.map((file) => {
    const name = file.slice(0, -'.up.sql'.length);
    if (!NAME.test(name)) throw new Error(`migrations/${backend}/${file}: name must look like 0001_some_name.up.sql`);
    const up = fs.readFileSync(path.join(dir, file), 'utf8');
    const downPath = path.join(dir, `${name}.down.sql`);
    const down = fs.existsSync(downPath) ? fs.readFileSync(downPath, 'utf8') : null;
    return { name, up, down, checksum: sha256(up) };
  });
}

/** Internal procedures with no SQLite twin live apart (`internal/`), so the operation folders hold the same names. */
export const INTERNAL_DIR = 'internal';

function procedurePath(name: string, root: string): string {
  if (!PROCEDURE_NAME.test(name)) throw new Error(`invalid procedure name ${JSON.stringify(name)}`);
  const file = path.join(root, `${name}.sql`);
  const internal = path.join(root, INTERNAL_DIR, `${name}.sql`);
  return !fs.existsSync(file) && fs.existsSync(internal) ? internal : file;
}

/** The text installed for a procedure (trimmed; its sha256 is the ledger's file_checksum). */
export function procedureText(name: string, root: string = PROCEDURES_DIR): string {
  return fs.readFileSync(procedurePath(name, root), 'utf8').trim();
}

/** The pin of a procedure file: sha256 of the file's bytes, as `sha256sum` prints it. */
export function procedurePin(name: string, root: string = PROCEDURES_DIR): string {
  return crypto
    .createHash('sha256')
    .update(fs.readFileSync(procedurePath(name, root)))
    .digest('hex');
}

export function listProcedureFiles(root: string = PROCEDURES_DIR): string[] {
  const internal = path.join(root, INTERNAL_DIR);
  return [...fs.readdirSync(root), ...(fs.existsSync(internal) ? fs.readdirSync(internal) : [])]
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.slice(0, -4))
    .sort();
}

const DIRECTIVE_LINE = /^--\s*@/;
const DIRECTIVE_FORMS: Array<[Directive['kind'], RegExp]> = [
  ['procedure', /^--\s*@procedure\s+(pc_[a-z0-9_]+)(?:\s+sha256=([0-9a-f]{64}))?\s*$/],
  ['drop-procedure', /^--\s*@drop-procedure\s+(pc_[a-z0-9_]+)\s*$/],
  ['require', /^--\s*@require\s+(database_charset)=([a-z0-9_]+)\s*$/],
  ['drop-table-if-empty', /^--\s*@drop-table-if-empty\s+([a-z][a-z0-9_]*)\s*$/],
  ['procedure-characteristics', /^--\s*@procedure-characteristics\s+(all-installed)\s*$/],
];

/**
 * The directive lines of a migration file. Strict: a line starting `-- @` that is not exactly one
 * of the forms above (a typo, an unknown word, trailing tokens) is an error, so a directive is
 * never silently skipped.
 */
export function parseDirectives(text: string, file = 'migration'): Directive[] {
  const out: Directive[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trimEnd();
    if (!DIRECTIVE_LINE.test(line)) return;
    for (const [kind, form] of DIRECTIVE_FORMS) {
      const m = form.exec(line);
      if (m) {
        out.push({ kind, name: m[1], value: m[2] ?? null, line: index + 1 });
        return;
      }
    }
    throw new MigrationDriftError(
      `${file}:${index + 1}: malformed directive ${JSON.stringify(line)}; expected "-- @procedure <name> sha256=<64 hex>", ` +
        '"-- @drop-procedure <name>", "-- @require database_charset=<charset>", "-- @drop-table-if-empty <table>" ' +
        'or "-- @procedure-characteristics all-installed"',
    );
  });
  return out;
}

/** Names given by one kind of directive, in line order (parses strictly, see parseDirectives). */
export function directives(text: string, directive: string): string[] {
  return parseDirectives(text)
    .filter((d) => d.kind === directive)
    .map((d) => d.name);
}

/** For each procedure, the name of the last migration (in `files`) whose up file installs it. */
export function latestInstallers(files: MigrationFile[]): Map<string, string> {
  const latest = new Map<string, string>();
  for (const file of files) {
    for (const d of parseDirectives(file.up, `${file.name}.up.sql`)) if (d.kind === 'procedure') latest.set(d.name, file.name);
  }
  return latest;
}

export interface PlanContext {
  /** Every migration file of the chain (to know which install of a procedure is the latest). */
  files?: MigrationFile[];
  /** Folder of the procedure files (default procedures/oceanbase of the package). */
  proceduresRoot?: string;
}

/**
 * Refuses a pinned `-- @procedure` line whose migration is the latest to install the procedure
 * when the file no longer matches the pin: the file changed after that migration was written, so
 * the change must ship through a new migration. Older (superseded) pins are not checked.
 */
export function verifyPins(migration: MigrationFile, context: PlanContext = {}): void {
  const latest = latestInstallers(context.files ?? [migration]);
  for (const d of parseDirectives(migration.up, `${migration.name}.up.sql`)) {
    if (d.kind !== 'procedure' || d.value === null || latest.get(d.name) !== migration.name) continue;
    const actual = procedurePin(d.name, context.proceduresRoot);
    if (actual !== d.value) {
      throw new MigrationDriftError(
        `procedures/oceanbase/${d.name}.sql (sha256 ${actual.slice(0, 12)}) does not match its pin in ${migration.name}.up.sql:${d.line} ` +
          `(sha256 ${d.value.slice(0, 12)}): a changed procedure ships through a NEW migration with "-- @procedure ${d.name} sha256=${actual}"`,
      );
    }
  }
}

/** The demo schema of a backend (migrations/<backend>/demo/reference_tables.sql): not a migration. */
export function demoSchemaText(backend: MigrationBackend, root: string = MIGRATIONS_DIR): string {
  return fs.readFileSync(path.join(root, backend, 'demo', 'reference_tables.sql'), 'utf8');
}

/** The tables the demo schema creates, in file order. */
export function demoTables(backend: MigrationBackend, root: string = MIGRATIONS_DIR): string[] {
  if (!fs.existsSync(path.join(root, backend, 'demo', 'reference_tables.sql'))) return [];
  return [...demoSchemaText(backend, root).matchAll(/^CREATE TABLE IF NOT EXISTS ([a-z][a-z0-9_]*)/gm)].map((m) => m[1]);
}
