/** Executes migration plans and reads the ledgers, one driver per backend. */
import type BetterSqlite3 from 'better-sqlite3';
import type { DatabaseTarget } from '../config/database-url.ts';
import { openSqliteDatabase } from '../store/sqlite/sqlite-store.ts';
import { LEDGER_TABLE, type PlannedStatement } from './catalog.ts';
import { ledgerBootstrap } from './plan.ts';
import { namedParams, type AppliedMigration, type MigrationDriver, type RecordedProcedure } from './driver.ts';

export type { MigrationDriver } from './driver.ts';

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

export async function openMigrationDriver(target: DatabaseTarget): Promise<MigrationDriver> {
  if (target.backend === 'sqlite') return new SqliteMigrationDriver(openSqliteDatabase(target.file), true);
  // Loaded on demand: a SQLite command never pays for mysql2 (issue 15, CLI start).
  const { MysqlMigrationDriver } = await import('./mysql-driver.ts');
  return MysqlMigrationDriver.connect(target);
}
