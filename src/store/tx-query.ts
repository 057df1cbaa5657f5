/** One parameterized statement on a transaction handle of either backend (for processors and tests). */
import Database from 'better-sqlite3';
import type { Connection, PoolConnection } from 'mysql2/promise';
import type { TxHandle } from './types.ts';

export async function txQuery(tx: TxHandle, sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  if (tx instanceof Database) {
    const stmt = tx.prepare(sql);
    if (stmt.reader) return stmt.all(...params) as Record<string, unknown>[];
    stmt.run(...params);
    return [];
  }
  const [rows] = await (tx as Connection | PoolConnection).query(sql, params);
  return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
}
