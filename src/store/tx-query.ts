/** One parameterized statement on a transaction handle of either backend (for processors and tests). */
import type BetterSqlite3 from 'better-sqlite3';
import type { Connection, PoolConnection } from 'mysql2/promise';
import type { Tx, TxHandle } from './types.ts';

/**
 * A better-sqlite3 connection, told apart by its methods rather than `instanceof`, so that a
 * process on MySQL (a host, a worker) never loads the SQLite driver.
 */
export function isSqliteConnection(tx: unknown): tx is BetterSqlite3.Database {
  const t = tx as { prepare?: unknown; pragma?: unknown; backup?: unknown } | null;
  return typeof t === 'object' && t !== null && typeof t.prepare === 'function' && typeof t.pragma === 'function' && typeof t.backup === 'function';
}

function isScoped(tx: TxHandle | Tx): tx is Tx {
  return typeof (tx as Tx).backend === 'string' && typeof (tx as Tx).query === 'function' && !isSqliteConnection(tx);
}

/** A scoped handle (ctx.commit's) runs its own checks; a driver handle runs the statement as is. */
export async function txQuery(tx: TxHandle | Tx, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  if (isScoped(tx)) return tx.query(sql, params);
  if (isSqliteConnection(tx)) {
    const stmt = tx.prepare(sql);
    if (stmt.reader) return stmt.all(...params) as Record<string, unknown>[];
    stmt.run(...params);
    return [];
  }
  const [rows] = await (tx as Connection | PoolConnection).query(sql, params);
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}
