/** One parameterized statement on a transaction handle of either backend (for processors and tests). */
import Database from 'better-sqlite3';
import type { Connection, PoolConnection } from 'mysql2/promise';
import type { Tx } from './scoped-tx.ts';
import type { TxHandle } from './types.ts';

function isScoped(tx: TxHandle | Tx): tx is Tx {
  return typeof (tx as Tx).backend === 'string' && typeof (tx as Tx).query === 'function' && !(tx instanceof Database);
}

/** A scoped handle (ctx.commit's) runs its own checks; a driver handle runs the statement as is. */
export async function txQuery(tx: TxHandle | Tx, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  if (isScoped(tx)) return tx.query(sql, params);
  if (tx instanceof Database) {
    const stmt = tx.prepare(sql);
    if (stmt.reader) return stmt.all(...params) as Record<string, unknown>[];
    stmt.run(...params);
    return [];
  }
  const [rows] = await (tx as Connection | PoolConnection).query(sql, params);
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}
