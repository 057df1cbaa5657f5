/**
 * MySQL / OceanBase (MySQL mode) adapter over mysql2. Every operation is one CALL of the stored
 * procedure of the same name; the adapter never decides what a procedure decides. Every pooled
 * connection is set to READ COMMITTED (OceanBase's default; no reliance on gap locks), to UTC and
 * to a pinned sql_mode, and the setup is verified before the connection serves an operation. A
 * connection the caller passes in (its own transaction) is checked once: READ COMMITTED and no
 * NO_BACKSLASH_ESCAPES, or the operation is refused. The server also bounds how long a
 * transaction of the store can stay open while its client is idle (transaction-bound.ts).
 */
import type { Pool, PoolConnection, Connection } from 'mysql2/promise';
import { BaseStore } from '../base-store.ts';
import type { Params } from '../params.ts';
import { InvalidArgumentError, isStoreErrorCode, storeErrorFromCode } from '../errors.ts';
import { OPERATIONS, type OperationName } from '../operations.ts';
import type { Row } from '../rows.ts';
import type { Term, TxHandle } from '../types.ts';
import { MYSQL_SESSION_SETUP, createMysqlPool, sessionProblem, type MysqlConnectionOptions } from './mysql-session.ts';
import {
  boundStatements,
  checkTransactionBound,
  engineOf,
  TransactionEndedError,
  transactionBoundFromEnv,
  wasClosedBeforeSend,
  type MysqlEngine,
} from './transaction-bound.ts';

/**
 * Attempts of an operation of the caller's kind that the store ran in a transaction of its own
 * and the server rolled back whole with SQLSTATE 40001 (a deadlock between two batches over the
 * same keys, COMPATIBILITY row 81). In the caller's own transaction the error reaches the caller.
 * Between attempts a random pause that doubles (up to 10, 20, 40, ... ms): an immediate retry
 * meets the same racing batches in the same state, and three such in a row were seen under load.
 */
const RETRIES_OF_OWN_TRANSACTION = 6;
const RETRY_PAUSE_FIRST_MS = 10;

/** The pause before attempt `attempt + 1`: uniform in [0, 10 * 2^(attempt - 1)] ms. */
export function deadlockRetryPauseMs(attempt: number, random: () => number = Math.random): number {
  return Math.floor(random() * RETRY_PAUSE_FIRST_MS * 2 ** (attempt - 1));
}

/** Physical connections whose session was verified (keyed by mysql2's core connection object). */
const verified = new WeakSet<object>();
/** The engine of each verified pool connection, whose transaction bound is set. */
const engines = new WeakMap<object, MysqlEngine>();

function coreOf(conn: object): object {
  return (conn as { connection?: object }).connection ?? conn;
}

export function mapMysqlError(operation: string, error: unknown): unknown {
  const e = error as { sqlState?: string; sqlMessage?: string };
  if (e && e.sqlState === '45000' && e.sqlMessage && isStoreErrorCode(e.sqlMessage)) {
    return storeErrorFromCode(e.sqlMessage, operation, error);
  }
  return error;
}

function resultSets(result: unknown): Row[][] {
  if (!Array.isArray(result)) return [];
  // CALL returns [resultSet1, ..., resultSetN, ResultSetHeader]; a plain SELECT returns rows.
  if (result.length > 0 && Array.isArray(result[0])) {
    return result.filter((item) => Array.isArray(item)) as Row[][];
  }
  return [result as Row[]];
}

function isConnection(tx: TxHandle): tx is Connection | PoolConnection {
  return typeof (tx as Connection).query === 'function' && typeof (tx as Connection).execute === 'function';
}

export interface MysqlStoreOptions {
  /** How long a transaction of the store may stay open and idle on the server; default one lease TTL from the environment. */
  transactionBoundMs?: number;
}

export class MysqlStore extends BaseStore {
  readonly backend = 'mysql' as const;
  readonly pool: Pool;
  readonly transactionBoundMs: number;
  private readonly callSql = new Map<OperationName, string>();
  /**
   * Told when an operation starts on a session and when it ends (the returned function): the
   * runtime's fence breaker watches its takeovers' lock waits with it (fence-breaker.ts).
   */
  watchCall: ((op: OperationName, threadId: number) => (() => void) | null) | null = null;

  constructor(pool: Pool, options: MysqlStoreOptions = {}) {
    super();
    this.pool = pool;
    this.transactionBoundMs = checkTransactionBound(options.transactionBoundMs ?? transactionBoundFromEnv());
  }

  static open(options: MysqlConnectionOptions, connectionLimit?: number, storeOptions?: MysqlStoreOptions): MysqlStore {
    return new MysqlStore(createMysqlPool(options, connectionLimit), storeOptions);
  }

  private sqlFor(op: OperationName): string {
    let sql = this.callSql.get(op);
    if (!sql) {
      sql = `CALL ${op}(${OPERATIONS[op].params.map(() => '?').join(', ')})`;
      this.callSql.set(op, sql);
    }
    return sql;
  }

  /** A pool connection whose session setup is verified (once per physical connection). */
  private async acquire(): Promise<PoolConnection> {
    const conn = await this.pool.getConnection();
    if (verified.has(coreOf(conn))) return conn;
    try {
      const problem = await sessionProblem(conn);
      if (problem) throw new Error(`MySQL session setup failed: ${problem}`);
      const [rows] = await conn.query('SELECT VERSION() AS version');
      const engine = engineOf(String((rows as Array<{ version: unknown }>)[0].version));
      for (const sql of boundStatements(engine, this.transactionBoundMs).session) await conn.query(sql);
      engines.set(coreOf(conn), engine);
    } catch (error) {
      conn.destroy();
      throw error;
    }
    verified.add(coreOf(conn));
    return conn;
  }

  /** Refuses a caller's connection whose session does not fit the stored logic (checked once per connection). */
  private async checkCallerConnection(op: OperationName, conn: Connection | PoolConnection): Promise<void> {
    const core = coreOf(conn);
    if (verified.has(core)) return;
    const problem = await sessionProblem(conn);
    if (problem) {
      throw new InvalidArgumentError(
        op,
        `${problem}: run ${MYSQL_SESSION_SETUP.map((s) => `"${s}"`).join(', ')} on it before its transaction, or use store.transaction()`,
      );
    }
    verified.add(core);
  }

  private async onPoolConnection<T>(fn: (conn: PoolConnection) => Promise<T>): Promise<T> {
    const conn = await this.acquire();
    try {
      return await fn(conn);
    } finally {
      conn.release();
    }
  }

  protected async call(op: OperationName, params: Params, tx?: TxHandle): Promise<Row[][]> {
    this.checkTxUse(op, tx);
    const values = OPERATIONS[op].params.map((name) => {
      const value = params[name];
      if (value === undefined) throw new Error(`${op}: missing parameter ${name}`);
      return value;
    });
    const sql = this.sqlFor(op);
    if (tx) {
      if (!isConnection(tx)) throw new Error(`${op}: a MySQL store needs a mysql2 connection as transaction handle`);
      await this.checkCallerConnection(op, tx);
      try {
        const [result] = await tx.query(sql, values);
        return resultSets(result);
      } catch (error) {
        throw mapMysqlError(op, error);
      }
    }
    if (OPERATIONS[op].transaction === 'caller') {
      // Called on its own: the statements must still share one transaction (lock held to commit).
      // A deadlock (or a procedure's own 40001) rolled that transaction back whole: run it again.
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.transaction((conn) => this.call(op, params, conn));
        } catch (error) {
          if (attempt >= RETRIES_OF_OWN_TRANSACTION || (error as { sqlState?: string }).sqlState !== '40001') throw error;
          // A pause of milliseconds before the retry: nothing decides by it, so no injected clock.
          await new Promise<void>((resolve) => setTimeout(resolve, deadlockRetryPauseMs(attempt)));
        }
      }
    }
    return this.onPoolConnection(async (conn) => {
      const stop = conn.threadId != null ? (this.watchCall?.(op, conn.threadId) ?? null) : null;
      try {
        const [result] = await conn.query(sql, values);
        return resultSets(result);
      } catch (error) {
        throw mapMysqlError(op, error);
      } finally {
        stop?.();
      }
    });
  }

  async domainQuery(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    return this.onPoolConnection(async (conn) => {
      const [rows] = await conn.query(sql, params);
      return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
    });
  }

  async transaction<T>(fn: (tx: TxHandle) => Promise<T> | T): Promise<T> {
    return this.inTransaction(async (conn) => {
      await conn.query('START TRANSACTION');
    }, fn);
  }

  async fencedTransaction<T>(term: Term, fn: (tx: TxHandle) => Promise<T> | T): Promise<T> {
    const op = 'pc_aps_begin_fenced';
    const params = this.beginFencedParams(term);
    const values = OPERATIONS[op].params.map((name) => params[name]);
    // START TRANSACTION and the term assertion in one call; the transaction stays open.
    return this.inTransaction(async (conn) => {
      try {
        await conn.query(this.sqlFor(op), values);
      } catch (error) {
        throw mapMysqlError(op, error);
      }
    }, fn);
  }

  /**
   * On one pool connection: open a transaction, run fn, COMMIT; ROLLBACK on any error (also of the
   * opening). Under the transaction bound (MySQL: set around the transaction); a transaction the
   * server ended before one of its statements or the COMMIT was sent raises TransactionEndedError.
   */
  private async inTransaction<T>(open: (conn: PoolConnection) => Promise<void>, fn: (tx: TxHandle) => Promise<T> | T): Promise<T> {
    const conn = await this.acquire();
    const bound = boundStatements(engines.get(coreOf(conn)) ?? 'mysql', this.transactionBoundMs);
    const observer = this.onTransaction;
    try {
      for (const sql of bound.open) await conn.query(sql);
      observer?.opened(conn.threadId ?? null);
      await open(conn);
      const result = await fn(conn);
      await conn.query('COMMIT');
      return result;
    } catch (error) {
      await conn.query('ROLLBACK').catch(() => undefined);
      // A statement (or the COMMIT) that never reached the server: the server had ended the transaction.
      throw wasClosedBeforeSend(error) ? new TransactionEndedError(this.transactionBoundMs, { cause: error }) : error;
    } finally {
      observer?.closed();
      try {
        for (const sql of bound.close) await conn.query(sql);
        conn.release();
      } catch {
        conn.destroy();
      }
    }
  }

  /** Physical connections the pool holds open now (a warm task worker counts these as its own). */
  openConnections(): number {
    return (this.pool.pool as unknown as { _allConnections?: { length: number } })._allConnections?.length ?? 0;
  }

  async close(): Promise<void> {
    try {
      await this.pool.end();
    } catch (error) {
      // A pooled connection the server already closed (killed, timed out) cannot be ended again;
      // closing the store still succeeds, every other connection has been ended by then.
      if (!/closed state/i.test((error as Error).message ?? '')) throw error;
    }
  }
}
