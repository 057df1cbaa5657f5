/** Executes migration plans and reads the ledgers, one driver per backend. */
import type BetterSqlite3 from 'better-sqlite3';
import mysql from 'mysql2/promise';
import type { Connection } from 'mysql2/promise';
import type { DatabaseTarget } from '../config/database-url.ts';
import { openSqliteDatabase } from '../store/sqlite/sqlite-store.ts';
import { MYSQL_SESSION_SETUP, sessionProblem } from '../store/mysql/mysql-store.ts';
import { LEDGER_TABLE, MigrationDriftError, PROCEDURE_LEDGER_TABLE, ledgerBootstrap, type MigrationBackend, type PlannedStatement } from './catalog.ts';

export interface AppliedMigration {
  name: string;
  checksum: string;
  appliedAt: string;
}
export interface RecordedProcedure {
  name: string;
  fileChecksum: string;
  definitionChecksum: string | null;
  migrationName: string;
}

export interface MigrationDriver {
  readonly backend: MigrationBackend;
  bootstrap(): Promise<void>;
  execute(plan: PlannedStatement[]): Promise<void>;
  applied(): Promise<AppliedMigration[]>;
  recordedProcedures(): Promise<RecordedProcedure[]>;
  /** Installed routine name -> SHA-256 of its body as the database reports it. */
  installedProcedures(): Promise<Map<string, string | null>>;
  /** Names of the triggers in the database (MySQL/OceanBase; SQLite: none checked). */
  installedTriggers(): Promise<Set<string>>;
  /** Whether the ledger table exists (read without creating it). */
  ledgerExists(): Promise<boolean>;
  /** Whether a table exists in the database (adoption detection). */
  tableExists(name: string): Promise<boolean>;
  /** A read-only query with :name parameters (adoption preflights). */
  read(sql: string, params?: Record<string, unknown>): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** The :name parameters a statement uses (a :name inside a string literal does not count). */
function namedParams(sql: string, params: Record<string, unknown>): Record<string, unknown> {
  const code = sql.replace(/'(?:[^']|'')*'/g, "''").replace(/--[^\n]*/g, '');
  const used = new Set([...code.matchAll(/(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
  const out: Record<string, unknown> = {};
  for (const name of used) {
    if (!(name in params)) throw new Error(`statement uses :${name}, which was not given`);
    out[name] = params[name];
  }
  return out;
}

export class SqliteMigrationDriver implements MigrationDriver {
  readonly backend = 'sqlite' as const;
  constructor(
    readonly db: BetterSqlite3.Database,
    private readonly owned: boolean,
  ) {}

  async bootstrap(): Promise<void> {
    for (const sql of ledgerBootstrap('sqlite')) this.db.exec(sql);
  }

  async execute(plan: PlannedStatement[]): Promise<void> {
    // DDL is transactional on SQLite: the migration and its ledger row commit together.
    this.db.exec('BEGIN IMMEDIATE');
    try {
      for (const statement of plan) {
        if (statement.onlyIfEmpty && !this.isEmptyTable(statement.onlyIfEmpty)) continue;
        this.db.exec(statement.sql);
      }
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Exists and holds no rows (inside the migration's transaction, so nothing can slip in). */
  private isEmptyTable(name: string): boolean {
    if (this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) === undefined) return false;
    return this.db.prepare(`SELECT 1 FROM "${name.replace(/"/g, '""')}" LIMIT 1`).get() === undefined;
  }

  async applied(): Promise<AppliedMigration[]> {
    const rows = this.db.prepare(`SELECT name, checksum, applied_at FROM ${LEDGER_TABLE} ORDER BY name`).all() as Array<{
      name: string;
      checksum: string;
      applied_at: string;
    }>;
    return rows.map((r) => ({ name: r.name, checksum: r.checksum, appliedAt: r.applied_at }));
  }

  async recordedProcedures(): Promise<RecordedProcedure[]> {
    return [];
  }

  async installedProcedures(): Promise<Map<string, string | null>> {
    return new Map();
  }

  async installedTriggers(): Promise<Set<string>> {
    return new Set();
  }

  async ledgerExists(): Promise<boolean> {
    return this.tableExists(LEDGER_TABLE);
  }

  async tableExists(name: string): Promise<boolean> {
    return this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
  }

  async read(sql: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>[]> {
    return this.db.prepare(sql).all(namedParams(sql, params)) as Record<string, unknown>[];
  }

  async close(): Promise<void> {
    if (this.owned && this.db.open) this.db.close();
  }
}

export class MysqlMigrationDriver implements MigrationDriver {
  readonly backend = 'oceanbase' as const;
  constructor(private readonly conn: Connection) {}

  static async connect(target: Extract<DatabaseTarget, { backend: 'mysql' }>): Promise<MysqlMigrationDriver> {
    const conn = await mysql.createConnection({
      host: target.host,
      port: target.port,
      user: target.user,
      password: target.password,
      database: target.database,
      dateStrings: true,
      timezone: 'Z',
      multipleStatements: false,
      charset: 'utf8mb4',
    });
    try {
      // Procedures are created with this session's sql_mode (a routine keeps the mode of its CREATE).
      for (const sql of MYSQL_SESSION_SETUP) await conn.query(sql);
      const problem = await sessionProblem(conn);
      if (problem) throw new Error(`MySQL session setup failed: ${problem}`);
    } catch (error) {
      await conn.end().catch(() => undefined);
      throw error;
    }
    return new MysqlMigrationDriver(conn);
  }

  async bootstrap(): Promise<void> {
    for (const sql of ledgerBootstrap('oceanbase')) await this.conn.query(sql);
  }

  async execute(plan: PlannedStatement[]): Promise<void> {
    // DDL commits implicitly on MySQL/OceanBase; the ledger row is the last statement, so an
    // interrupted migration stays pending and its statements are written to be re-runnable
    // by hand after inspection (see README, "Migrations").
    for (const statement of plan) {
      if (statement.onlyIfEmpty && !(await this.isEmptyTable(statement.onlyIfEmpty))) continue;
      const [result] = await this.conn.query(statement.sql);
      if (statement.check) {
        const row = Array.isArray(result) ? (result[0] as Record<string, unknown> | undefined) : undefined;
        const value = row ? String(Object.values(row)[0]) : '';
        if (value.toLowerCase() !== statement.check.expect.toLowerCase()) {
          throw new MigrationDriftError(`${statement.check.message} (the database has ${value || 'nothing'})`);
        }
      }
    }
  }

  private async isEmptyTable(name: string): Promise<boolean> {
    if (!(await this.tableExists(name))) return false;
    const [rows] = await this.conn.query(`SELECT 1 FROM \`${name.replace(/`/g, '``')}\` LIMIT 1`);
    return (rows as unknown[]).length === 0;
  }

  async applied(): Promise<AppliedMigration[]> {
    const [rows] = await this.conn.query(`SELECT name, checksum, applied_at FROM ${LEDGER_TABLE} ORDER BY name`);
    return (rows as Array<{ name: string; checksum: string; applied_at: string }>).map((r) => ({
      name: r.name,
      checksum: r.checksum,
      appliedAt: String(r.applied_at),
    }));
  }

  async recordedProcedures(): Promise<RecordedProcedure[]> {
    const [rows] = await this.conn.query(
      `SELECT procedure_name, file_checksum, definition_checksum, migration_name FROM ${PROCEDURE_LEDGER_TABLE} ORDER BY procedure_name`,
    );
    return (rows as Array<Record<string, string | null>>).map((r) => ({
      name: String(r.procedure_name),
      fileChecksum: String(r.file_checksum),
      definitionChecksum: r.definition_checksum === null ? null : String(r.definition_checksum),
      migrationName: String(r.migration_name),
    }));
  }

  async installedProcedures(): Promise<Map<string, string | null>> {
    const [rows] = await this.conn.query(
      `SELECT ROUTINE_NAME AS name, SHA2(ROUTINE_DEFINITION, 256) AS checksum FROM information_schema.ROUTINES
        WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME LIKE 'pc\\_%'`,
    );
    // A NULL body: the account may not read routine bodies (COMPATIBILITY row 97).
    return new Map((rows as Array<{ name: string; checksum: string | null }>).map((r) => [String(r.name), r.checksum === null ? null : String(r.checksum)]));
  }

  async installedTriggers(): Promise<Set<string>> {
    const [rows] = await this.conn.query('SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()');
    return new Set((rows as Array<{ name: string }>).map((r) => String(r.name)));
  }

  async ledgerExists(): Promise<boolean> {
    return this.tableExists(LEDGER_TABLE);
  }

  async tableExists(name: string): Promise<boolean> {
    const [rows] = await this.conn.query('SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?', [name]);
    return (rows as unknown[]).length > 0;
  }

  async read(sql: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>[]> {
    const [rows] = await this.conn.query({ sql, namedPlaceholders: true }, namedParams(sql, params) as Record<string, never>);
    return rows as Record<string, unknown>[];
  }

  async close(): Promise<void> {
    await this.conn.end();
  }
}

export async function openMigrationDriver(target: DatabaseTarget): Promise<MigrationDriver> {
  if (target.backend === 'sqlite') return new SqliteMigrationDriver(openSqliteDatabase(target.file), true);
  return MysqlMigrationDriver.connect(target);
}
