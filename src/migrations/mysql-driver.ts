/** The MySQL/OceanBase migration driver, imported by openMigrationDriver only for a MySQL target. */
import mysql from 'mysql2/promise';
import type { Connection } from 'mysql2/promise';
import type { DatabaseTarget } from '../config/database-url.ts';
import { MYSQL_SESSION_SETUP, mysqlConnectionConfig, sessionProblem } from '../store/mysql/mysql-session.ts';
import { LEDGER_TABLE, MigrationDriftError, PROCEDURE_LEDGER_TABLE, type PlannedStatement } from './catalog.ts';
import { ledgerBootstrap } from './plan.ts';
import { namedParams, type AppliedMigration, type MigrationDriver, type RecordedProcedure } from './driver.ts';

export class MysqlMigrationDriver implements MigrationDriver {
  readonly backend = 'oceanbase' as const;
  constructor(private readonly conn: Connection) {}

  static async connect(target: Extract<DatabaseTarget, { backend: 'mysql' }>): Promise<MysqlMigrationDriver> {
    const conn = await mysql.createConnection(mysqlConnectionConfig(target));
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
