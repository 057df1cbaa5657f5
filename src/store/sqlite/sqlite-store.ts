/**
 * SQLite adapter (embedded default, better-sqlite3@12). One connection per store; operations
 * and transactions on it are serialized by an async mutex so a transaction callback that awaits
 * cannot interleave with another operation on the same handle.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { BaseStore, type Params } from '../base-store.ts';
import { OPERATIONS, type OperationName } from '../operations.ts';
import type { Row } from '../rows.ts';
import type { Term, TxHandle } from '../types.ts';
import { runSqliteScript } from './script.ts';

export interface SqliteOpenOptions {
  busyTimeoutMs?: number;
  readonly?: boolean;
}

export function openSqliteDatabase(file: string, options: SqliteOpenOptions = {}): BetterSqlite3.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file, { readonly: options.readonly ?? false });
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
  if (!options.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
  }
  db.pragma('foreign_keys = ON');
  return db;
}

class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T> | T): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => { release = resolve; });
    await previous;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

export class SqliteStore extends BaseStore {
  readonly backend = 'sqlite' as const;
  readonly db: BetterSqlite3.Database;
  private readonly mutex = new Mutex();
  private activeTx: BetterSqlite3.Database | null = null;

  constructor(db: BetterSqlite3.Database) {
    super();
    this.db = db;
  }

  static open(file: string, options?: SqliteOpenOptions): SqliteStore {
    return new SqliteStore(openSqliteDatabase(file, options));
  }

  protected async call(op: OperationName, params: Params, tx?: TxHandle): Promise<Row[][]> {
    this.checkTxUse(op, tx);
    if (tx) {
      if (!(tx instanceof Database)) throw new Error(`${op}: a SQLite store needs a better-sqlite3 Database as transaction handle`);
      return runSqliteScript(tx, op, params, { inCallerTransaction: true, writes: true });
    }
    const writes = OPERATIONS[op].transaction !== 'read';
    return this.mutex.run(() => runSqliteScript(this.db, op, params, { inCallerTransaction: false, writes }));
  }

  async domainQuery(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    return this.mutex.run(() => {
      const stmt = this.db.prepare(sql);
      if (stmt.reader) return stmt.all(...params) as Record<string, unknown>[];
      stmt.run(...params);
      return [];
    });
  }

  async transaction<T>(fn: (tx: TxHandle) => Promise<T> | T): Promise<T> {
    return this.mutex.run(async () => {
      if (this.activeTx) throw new Error('nested transactions are not supported');
      this.db.exec('BEGIN IMMEDIATE');
      this.activeTx = this.db;
      try {
        const result = await fn(this.db);
        this.db.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw error;
      } finally {
        this.activeTx = null;
      }
    });
  }

  async fencedTransaction<T>(term: Term, fn: (tx: TxHandle) => Promise<T> | T): Promise<T> {
    const params = this.beginFencedParams(term);
    return this.transaction(async (db) => {
      runSqliteScript(db as BetterSqlite3.Database, 'pc_aps_begin_fenced', params, { inCallerTransaction: true, writes: true });
      return fn(db);
    });
  }

  async close(): Promise<void> {
    await this.mutex.run(() => {
      if (this.db.open) this.db.close();
    });
  }
}
