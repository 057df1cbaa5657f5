/** What a migration driver does for the migrator, whatever the backend (drivers.ts: SQLite, mysql-driver.ts: MySQL/OceanBase). */
import type { MigrationBackend, PlannedStatement } from './catalog.ts';

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
export function namedParams(sql: string, params: Record<string, unknown>): Record<string, unknown> {
  const code = sql.replace(/'(?:[^']|'')*'/g, "''").replace(/--[^\n]*/g, '');
  const used = new Set([...code.matchAll(/(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]));
  const out: Record<string, unknown> = {};
  for (const name of used) {
    if (!(name in params)) throw new Error(`statement uses :${name}, which was not given`);
    out[name] = params[name];
  }
  return out;
}
