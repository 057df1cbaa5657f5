/**
 * MySQL / OceanBase (MySQL mode) adapter over mysql2. Every operation is one CALL of the stored
 * procedure of the same name; the adapter never decides what a procedure decides. Every pooled
 * connection is set to READ COMMITTED (OceanBase's default; no reliance on gap locks) and to UTC.
 */
import mysql from 'mysql2/promise';
import type { Pool, PoolConnection, Connection } from 'mysql2/promise';
import { BaseStore, type Params } from '../base-store.ts';
import { isStoreErrorCode, storeErrorFromCode } from '../errors.ts';
import { OPERATIONS, type OperationName } from '../operations.ts';
import type { Row } from '../rows.ts';
import type { TxHandle } from '../types.ts';

export const MYSQL_SESSION_SETUP = [
  'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
  "SET time_zone = '+00:00'",
];

export interface MysqlConnectionOptions {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export function createMysqlPool(options: MysqlConnectionOptions, connectionLimit = 10): Pool {
  const pool = mysql.createPool({
    ...options,
    connectionLimit,
    dateStrings: true,
    timezone: 'Z',
    supportBigNumbers: true,
    multipleStatements: false,
    charset: 'utf8mb4',
  });
  // Runs on each new physical connection before it serves any query.
  pool.pool.on('connection', (connection) => {
    for (const sql of MYSQL_SESSION_SETUP) connection.query(sql);
  });
  return pool;
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

export class MysqlStore extends BaseStore {
  readonly backend = 'mysql' as const;
  readonly pool: Pool;
  private readonly callSql = new Map<OperationName, string>();

  constructor(pool: Pool) {
    super();
    this.pool = pool;
  }

  static open(options: MysqlConnectionOptions, connectionLimit?: number): MysqlStore {
    return new MysqlStore(createMysqlPool(options, connectionLimit));
  }

  private sqlFor(op: OperationName): string {
    let sql = this.callSql.get(op);
    if (!sql) {
      sql = `CALL ${op}(${OPERATIONS[op].params.map(() => '?').join(', ')})`;
      this.callSql.set(op, sql);
    }
    return sql;
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
      try {
        const [result] = await tx.query(sql, values);
        return resultSets(result);
      } catch (error) {
        throw mapMysqlError(op, error);
      }
    }
    if (OPERATIONS[op].transaction === 'caller') {
      // Called on its own: the statements must still share one transaction (lock held to commit).
      return this.transaction((conn) => this.call(op, params, conn));
    }
    try {
      const [result] = await this.pool.query(sql, values);
      return resultSets(result);
    } catch (error) {
      throw mapMysqlError(op, error);
    }
  }

  async domainQuery(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
    const [rows] = await this.pool.query(sql, params);
    return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
  }

  async transaction<T>(fn: (tx: TxHandle) => Promise<T> | T): Promise<T> {
    const conn = await this.pool.getConnection();
    try {
      await conn.query('START TRANSACTION');
      try {
        const result = await fn(conn);
        await conn.query('COMMIT');
        return result;
      } catch (error) {
        await conn.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    } finally {
      conn.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
