/**
 * SQLite read handle: its own connection, opened read-only (SQLITE_OPEN_READONLY, so no PRAGMA
 * can make it write to the database) with `query_only` on. In WAL mode a reader never waits for
 * the writer. A statement runs only when the engine says it reads (read-program.ts): the
 * read-only connection alone still lets VACUUM INTO write a file.
 */
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { ReadOnlyError } from '../errors.ts';
import { judgeRead, type ReadVerdict } from './read-program.ts';
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
  private db: BetterSqlite3.Database | null;
  private readonly verdicts = new Map<string, ReadVerdict>();
  private closed = false;

  /** @param reopen a fresh connection, replacing one a refused statement may have changed (none: the handle closes then) */
  constructor(
    db: BetterSqlite3.Database,
    private readonly reopen: (() => BetterSqlite3.Database) | null = null,
  ) {
    this.db = db;
  }

  static open(file: string, busyTimeoutMs = 5000): SqliteReadHandle {
    const connect = () => {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      db.pragma(`busy_timeout = ${busyTimeoutMs}`);
      db.pragma('query_only = ON');
      // Reads sync nothing; set anyway so every runtime connection reports the one setting.
      db.pragma(`synchronous = ${sqliteSynchronous()}`);
      return db;
    };
    return new SqliteReadHandle(connect(), connect);
  }

  private connection(): BetterSqlite3.Database {
    if (!this.closed) this.db ??= this.reopen?.() ?? null;
    if (this.closed || !this.db?.open) throw new ReadOnlyError(OP, 'the read handle is closed');
    return this.db;
  }

  /** Closes the connection; the next statement gets a new one. */
  private recycle(db: BetterSqlite3.Database): void {
    if (db.open) db.close();
    if (this.db === db) this.db = null;
  }

  async query(sql: string, params: unknown[] = [], options: ReadOptions = {}): Promise<ReadRow[]> {
    assertReadStatement(OP, sql, params);
    options.signal?.throwIfAborted();
    const db = this.connection();
    try {
      const stmt = db.prepare(sql);
      const verdict = judgeRead(db, stmt, sql, params, this.verdicts);
      try {
        if (verdict.refusal) throw new ReadOnlyError(OP, verdict.refusal);
        if (stmt.reader) return stmt.all(...params) as ReadRow[];
        stmt.run(...params);
        return [];
      } finally {
        if (verdict.recycle) this.recycle(db);
      }
    } catch (error) {
      if (isSqliteReadOnly(error)) throw new ReadOnlyError(OP, 'the database refused a write', { cause: error });
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const db = this.db;
    this.db = null;
    if (db?.open) db.close();
  }
}
