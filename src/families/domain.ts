/** Small portable helpers for the reference families' domain SQL (SQLite and MySQL). */
import type { PendingWorkProvider } from '../registry/registration.ts';
import type { Tx } from '../store/scoped-tx.ts';
import type { Backend, Store, TxHandle } from '../store/types.ts';
import { txQuery } from '../store/tx-query.ts';

/** `FOR UPDATE` on MySQL/OceanBase; SQLite's BEGIN IMMEDIATE already holds the write lock. */
export function forUpdate(backend: Backend): string {
  return backend === 'sqlite' ? '' : ' FOR UPDATE';
}

export function num(value: unknown): number {
  return value === null || value === undefined ? 0 : Number(value);
}

/** Reads a single integer column of the first row (0 when absent). */
export async function scalar(tx: TxHandle | Tx, sql: string, params: unknown[]): Promise<number> {
  const rows = await txQuery(tx, sql, params);
  const row = rows[0];
  return row ? num(Object.values(row)[0]) : 0;
}

/** Sets a per-scope cursor row: update, or insert the first time. */
export async function writeCursor(tx: TxHandle | Tx, table: string, scopeId: string, throughSeq: number, existed: boolean): Promise<void> {
  if (existed) await txQuery(tx, `UPDATE ${table} SET through_seq = ? WHERE scope_id = ?`, [throughSeq, scopeId]);
  else await txQuery(tx, `INSERT INTO ${table} (scope_id, through_seq) VALUES (?, ?)`, [scopeId, throughSeq]);
}

/** Appends to a per-scope journal and marks the key dirty, in one transaction (RFC 3). */
export async function appendJournal(
  store: Store,
  table: string,
  bindingName: string,
  scopeId: string,
  columns: Record<string, number>,
  tx?: TxHandle,
): Promise<number> {
  const run = async (t: TxHandle) => {
    const seq = (await scalar(t, `SELECT COALESCE(MAX(seq), 0) AS s FROM ${table} WHERE scope_id = ?${forUpdate(store.backend)}`, [scopeId])) + 1;
    const names = Object.keys(columns);
    await txQuery(t, `INSERT INTO ${table} (scope_id, seq${names.map((n) => `, ${n}`).join('')}) VALUES (?, ?${names.map(() => ', ?').join('')})`, [
      scopeId,
      seq,
      ...names.map((n) => columns[n]),
    ]);
    await store.markDirty(bindingName, scopeId, t);
    return seq;
  };
  return tx ? run(tx) : store.transaction(run);
}

/**
 * Pending-work calibration for a journal family (RFC 1, 11): every scope whose journal is ahead of
 * its cursor but has no dirty mark is re-marked, at most `limit` per call, oldest scope ids first.
 */
export function journalAheadProvider(journal: string, cursors: string, bindingName: string): PendingWorkProvider {
  return {
    async remarkDirty({ markDirty, query, limit, signal }) {
      const rows = await query(
        `SELECT s.scope_id FROM ${journal} s
           LEFT JOIN ${cursors} c ON c.scope_id = s.scope_id
           LEFT JOIN pc_artifact_processing_intents i ON i.binding_name = ? AND i.scope_id = s.scope_id
          WHERE s.seq > COALESCE(c.through_seq, 0)
            AND (i.scope_id IS NULL OR i.dirty_generation = i.clean_generation)
          GROUP BY s.scope_id
          ORDER BY s.scope_id
          LIMIT ?`,
        [bindingName, limit],
      );
      for (const row of rows) {
        if (signal.aborted) break;
        await markDirty(String(row.scope_id));
      }
      return rows.length;
    },
  };
}
