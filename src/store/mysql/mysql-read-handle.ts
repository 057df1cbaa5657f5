/**
 * MySQL/OceanBase read handle: a pool of its own whose sessions run every transaction READ ONLY
 * (`SET SESSION TRANSACTION READ ONLY`: the server refuses DML and DDL with ER 1792), with the
 * store's isolation, time zone and sql_mode, and a server-side bound per statement. The session
 * setup is verified before a connection serves a read; statements that could change the session
 * (SET, START, COMMIT, CALL, ...) never reach it (assertReadStatement).
 */
import type { Pool, PoolConnection } from 'mysql2/promise';
import { ReadOnlyError } from '../errors.ts';
import { assertReadStatement } from '../read-statement.ts';
import type { ReadHandle, ReadHandleOptions, ReadOptions, ReadRow } from '../types.ts';
import { createMysqlPool, mysql2, sessionProblem, type MysqlConnectionOptions } from './mysql-session.ts';

const OP = 'read handle';
const ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION = 1792;
const ER_UNKNOWN_SYSTEM_VARIABLE = 1193;

/** Per-engine statement bounds (COMPATIBILITY.md): the first the server knows is kept. */
function timeoutStatements(ms: number): string[] {
  return [
    `SET SESSION max_statement_time = ${(ms / 1000).toFixed(3)}`, // MariaDB (seconds)
    `SET SESSION max_execution_time = ${ms}`, // MySQL 8 (ms, SELECT)
    `SET SESSION ob_query_timeout = ${ms * 1000}`, // OceanBase (microseconds)
  ];
}

async function readOnlyFlag(conn: PoolConnection): Promise<boolean> {
  for (const variable of ['transaction_read_only', 'tx_read_only']) {
    try {
      const [rows] = await conn.query(`SELECT @@SESSION.${variable} AS ro`);
      return Number((rows as Array<{ ro: unknown }>)[0].ro) === 1;
    } catch (error) {
      if ((error as { errno?: number }).errno !== ER_UNKNOWN_SYSTEM_VARIABLE) throw error;
    }
  }
  throw new Error('the server reports neither @@transaction_read_only nor @@tx_read_only');
}

export class MysqlReadHandle implements ReadHandle {
  readonly backend = 'mysql' as const;
  private readonly pool: Pool;
  private readonly verified = new WeakSet<object>();
  private readonly timeoutMs: number;

  constructor(
    pool: Pool,
    timeoutMs: number,
    private readonly connection: MysqlConnectionOptions,
  ) {
    this.pool = pool;
    this.timeoutMs = timeoutMs;
  }

  static open(options: MysqlConnectionOptions, handleOptions: ReadHandleOptions = {}): MysqlReadHandle {
    const pool = createMysqlPool(options, handleOptions.connectionLimit ?? 2);
    return new MysqlReadHandle(pool, handleOptions.statementTimeoutMs ?? 30_000, options);
  }

  /** A connection whose session is read-only and verified (once per physical connection). */
  private async acquire(): Promise<PoolConnection> {
    const conn = await this.pool.getConnection();
    const core = (conn as { connection?: object }).connection ?? conn;
    if (this.verified.has(core)) return conn;
    try {
      // The store's session setup is queued by createMysqlPool on each new connection.
      await conn.query('SET SESSION TRANSACTION READ ONLY');
      for (const sql of timeoutStatements(this.timeoutMs)) {
        try {
          await conn.query(sql);
          break;
        } catch (error) {
          if ((error as { errno?: number }).errno !== ER_UNKNOWN_SYSTEM_VARIABLE) throw error;
        }
      }
      const problem = await sessionProblem(conn);
      if (problem) throw new Error(`MySQL read session setup failed: ${problem}`);
      if (!(await readOnlyFlag(conn))) throw new Error('MySQL read session setup failed: the session is not read-only');
    } catch (error) {
      conn.destroy();
      throw error;
    }
    this.verified.add(core);
    return conn;
  }

  async query(sql: string, params: unknown[] = [], options: ReadOptions = {}): Promise<ReadRow[]> {
    assertReadStatement(OP, sql, params);
    const { signal } = options;
    signal?.throwIfAborted();
    const conn = await this.acquire();
    let aborted = false;
    let onAbort: (() => void) | null = null;
    const abort = new Promise<never>((_, reject) => {
      onAbort = () => {
        aborted = true;
        // The statement is cut off on the server too, then the connection is discarded.
        const threadId = (conn as { threadId?: number }).threadId;
        void this.killQuery(threadId).finally(() => conn.destroy());
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const [rows] = await Promise.race([conn.query(sql, params), abort]);
      return Array.isArray(rows) ? (rows as ReadRow[]) : [];
    } catch (error) {
      if (aborted) throw signal!.reason;
      if ((error as { errno?: number }).errno === ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION) {
        throw new ReadOnlyError(OP, 'the database refused a write', { cause: error });
      }
      throw error;
    } finally {
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      if (!aborted) conn.release();
    }
  }

  /** KILL QUERY of an aborted read, on a connection of its own (the pool may be busy). */
  private async killQuery(threadId: number | undefined): Promise<void> {
    if (!Number.isSafeInteger(threadId)) return;
    try {
      const killer = await mysql2().createConnection(this.connection);
      await killer.query('KILL QUERY ?', [threadId]).finally(() => killer.end());
    } catch {
      // The server's statement bound ends it anyway.
    }
  }

  async close(): Promise<void> {
    try {
      await this.pool.end();
    } catch (error) {
      if (!/closed state/i.test((error as Error).message ?? '')) throw error;
    }
  }
}
