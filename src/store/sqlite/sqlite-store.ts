/**
 * SQLite adapter (embedded default, better-sqlite3@12). One connection per store; operations
 * and transactions on it are serialized by an async mutex so a transaction callback that awaits
 * cannot interleave with another operation on the same handle.
 *
 * The runtime host opens its store with `openHost` (issue 17 item 1): a busy_timeout of a few ms,
 * and an attempt that finds the write lock taken is retried asynchronously within a bound
 * (lock-wait.ts), the connection free for reads meanwhile, so a worker holding the lock never
 * freezes the host's event loop. Other processes (workers, CLI) wait for it blocking, bounded by
 * the busy_timeout, in sub-millisecond steps (begin-immediate.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { BaseStore } from '../base-store.ts';
import type { Params } from '../params.ts';
import { OPERATIONS, type OperationName } from '../operations.ts';
import type { Row } from '../rows.ts';
import type { Term, TxHandle } from '../types.ts';
import { walFileOf } from './wal-file.ts';
import { DatabaseBusyError } from '../errors.ts';
import { beginImmediateBlocking } from './begin-immediate.ts';
import { transactionBoundFromEnv } from '../mysql/transaction-bound.ts';
import { BUSY, LockGate, hostLockWait, isSqliteBusy, lockWaitBoundMs, retryWhileBusy, type LockWaitOptions } from './lock-wait.ts';
import { loadSqliteScript, runSqliteScript } from './script.ts';
import { sqliteSynchronous, type SqliteSynchronous } from './synchronous.ts';

export interface SqliteOpenOptions {
  /** Default: one commit budget (the lease TTL of this process's environment) plus a margin (lock-wait.ts). */
  busyTimeoutMs?: number;
  readonly?: boolean;
  /** Default: POWERCONTEXT_SERVER_RUNTIME_SQLITE_SYNCHRONOUS of this process (synchronous.ts). */
  synchronous?: SqliteSynchronous;
  /**
   * Touch the WAL file after each commit of this store (a command's store: open.ts). A host's
   * commit watch (runtime/sqlite-wakeup.ts) then gets a file event after the commit is published,
   * not only the WAL frames' events before it, so it sees the commit without waiting for a recheck.
   */
  announceCommits?: boolean;
}

export function openSqliteDatabase(file: string, options: SqliteOpenOptions = {}): BetterSqlite3.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  // An absolute name: the write-target probe reopens db.name, and a later chdir must not move it.
  const db = new Database(file === ':memory:' || file === '' ? file : path.resolve(file), { readonly: options.readonly ?? false });
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? lockWaitBoundMs(transactionBoundFromEnv())}`);
  if (!options.readonly) db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous ?? sqliteSynchronous()}`);
  db.pragma('foreign_keys = ON');
  return db;
}

class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async run<T>(fn: () => Promise<T> | T): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
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
  private readonly gate = new LockGate();
  /** The WAL file touched after each commit, or null (announceCommits). */
  private readonly announceFile: string | null;

  /** @param lockWait host mode: the asynchronous, bounded lock wait (the connection's busy_timeout must be its busyTimeoutMs) */
  constructor(
    db: BetterSqlite3.Database,
    private readonly lockWait: LockWaitOptions | null = null,
    options: { announceCommits?: boolean } = {},
  ) {
    super();
    this.db = db;
    this.announceFile = options.announceCommits && !db.memory ? walFileOf(db.name) : null;
  }

  static open(file: string, options?: SqliteOpenOptions): SqliteStore {
    return new SqliteStore(openSqliteDatabase(file, options), null, { announceCommits: options?.announceCommits });
  }

  /**
   * A file event after a commit (announceCommits). Best effort: setting the times needs the file's
   * owner (a command run as another user gets EPERM); the watch's rechecks remain then.
   */
  private announce(): void {
    if (!this.announceFile) return;
    try {
      const now = new Date();
      fs.utimesSync(this.announceFile, now, now);
    } catch {
      // the rechecks after the commit's own file events still see it
    }
  }

  /** The runtime host's store: never blocks its event loop on the lock for more than busyTimeoutMs per attempt. */
  static openHost(file: string, lockWait: LockWaitOptions = hostLockWait(transactionBoundFromEnv()), synchronous?: SqliteSynchronous): SqliteStore {
    return new SqliteStore(openSqliteDatabase(file, { busyTimeoutMs: lockWait.busyTimeoutMs, synchronous }), lockWait);
  }

  /**
   * Runs one self-contained attempt (nothing of it is applied when it fails) on the connection;
   * in host mode an attempt that found the lock taken is retried within the bound. Before it
   * writes, `run` asks `mayWrite()`: false while another attempt just found the lock taken (wait
   * for the shared probe instead). Reads (WAL: no write lock) never wait for writers.
   */
  private exclusive<T>(operation: string, run: (mayWrite: () => boolean) => T | typeof BUSY): Promise<T> {
    if (!this.lockWait) return this.mutex.run(() => run(() => true) as T);
    const mayWrite = () => !this.gate.closed;
    return retryWhileBusy(operation, this.lockWait, this.gate, () =>
      this.mutex.run(() => {
        try {
          return run(mayWrite);
        } catch (error) {
          if (isSqliteBusy(error)) return BUSY;
          throw error;
        }
      }),
    );
  }

  protected async call(op: OperationName, params: Params, tx?: TxHandle): Promise<Row[][]> {
    this.checkTxUse(op, tx);
    if (tx) {
      if (!(tx instanceof Database)) throw new Error(`${op}: a SQLite store needs a better-sqlite3 Database as transaction handle`);
      return runSqliteScript(tx, op, params, { inCallerTransaction: true, writes: true });
    }
    const writes = OPERATIONS[op].transaction !== 'read';
    const locks = writes || loadSqliteScript(op).ownsTransaction;
    // A script runs whole in its own BEGIN IMMEDIATE (rolled back on any error): safe to retry.
    // Outside the host, the wait for the lock blocks in fine steps (begin-immediate.ts).
    const begin = this.lockWait ? undefined : beginImmediateBlocking;
    const rows = await this.exclusive(op, (mayWrite) =>
      locks && !mayWrite() ? BUSY : runSqliteScript(this.db, op, params, { inCallerTransaction: false, writes, begin }),
    );
    if (writes) this.announce();
    return rows;
  }

  async domainQuery(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    // One autocommit statement: a busy one applied nothing.
    return this.exclusive('domainQuery', (mayWrite) => {
      const stmt = this.db.prepare(sql);
      const run = (): Record<string, unknown>[] => {
        if (stmt.reader) return stmt.all(...params) as Record<string, unknown>[];
        stmt.run(...params);
        return [];
      };
      if (stmt.readonly) return run();
      if (!mayWrite()) return BUSY;
      // A write that returns rows (INSERT ... RETURNING) commits through all().
      const rows = run();
      this.announce();
      return rows;
    });
  }

  async transaction<T>(fn: (tx: TxHandle) => Promise<T> | T): Promise<T> {
    const lockWait = this.lockWait;
    if (!lockWait) return this.mutex.run(() => this.runTransaction(fn, null));
    // Only BEGIN IMMEDIATE is retried; once it succeeded, fn runs exactly once.
    return retryWhileBusy('transaction', lockWait, this.gate, () => this.mutex.run(() => (this.gate.closed ? BUSY : this.runTransaction(fn, BUSY))));
  }

  /** BEGIN IMMEDIATE, fn, COMMIT (ROLLBACK on error), under the mutex. With `busy`, a taken lock at BEGIN returns it. */
  private async runTransaction<T, B extends typeof BUSY | null>(fn: (tx: TxHandle) => Promise<T> | T, busy: B): Promise<T | NonNullable<B>> {
    if (this.activeTx) throw new Error('nested transactions are not supported');
    try {
      if (busy) this.db.exec('BEGIN IMMEDIATE');
      else beginImmediateBlocking(this.db); // not the host: a blocking wait, in fine steps
    } catch (error) {
      if (busy && isSqliteBusy(error)) return busy as NonNullable<B>;
      throw error;
    }
    const started = performance.now();
    this.activeTx = this.db;
    const observer = this.onTransaction;
    observer?.opened(null);
    try {
      const result = await fn(this.db);
      this.db.exec('COMMIT');
      this.announce();
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      // In host mode a busy statement inside the transaction (rare in WAL) is a transient failure.
      if (busy && isSqliteBusy(error)) throw new DatabaseBusyError('transaction', performance.now() - started, { cause: error });
      throw error;
    } finally {
      this.activeTx = null;
      observer?.closed();
    }
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
