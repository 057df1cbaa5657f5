/**
 * SQLite read handle: its own connection, opened read-only (SQLITE_OPEN_READONLY, so no PRAGMA
 * can make it write) with `query_only` on. In WAL mode a reader never waits for the writer.
 */
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { ReadOnlyError } from '../errors.ts';
import { txQuery } from '../tx-query.ts';
import { sqliteSynchronous } from './synchronous.ts';
import { assertReadStatement } from '../read-statement.ts';
import type { ReadHandle, ReadOptions, ReadRow } from '../types.ts';

const OP = 'read handle';

/** better-sqlite3 reports SQLITE_READONLY* for every write the read-only connection refuses. */
export function isSqliteReadOnly(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_READONLY');
}

export class SqliteReadHandle implements ReadHandle {
  readonly backend = 'sqlite' as const;
  private readonly db: BetterSqlite3.Database;

  constructor(db: BetterSqlite3.Database) {
    this.db = db;
  }

  static open(file: string, busyTimeoutMs = 5000): SqliteReadHandle {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma('query_only = ON');
    // Reads sync nothing; set anyway so every runtime connection reports the one setting.
    db.pragma(`synchronous = ${sqliteSynchronous()}`);
    return new SqliteReadHandle(db);
  }

  async query(sql: string, params: unknown[] = [], options: ReadOptions = {}): Promise<ReadRow[]> {
    assertReadStatement(OP, sql);
    options.signal?.throwIfAborted();
    try {
      // A statement that is not a read (e.g. WITH ... INSERT) is still sent: the read-only
      // connection refuses it.
      return await txQuery(this.db, sql, params);
    } catch (error) {
      if (isSqliteReadOnly(error)) throw new ReadOnlyError(OP, 'the database refused a write', { cause: error });
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
