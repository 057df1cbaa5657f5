/**
 * The transaction handle a processor's `ctx.commit`, a task handler's `ctx.commit`/`onComplete`
 * and a failure hook receive: statements run inside the fenced transaction only while it is
 * open. The driver handle is never exposed, so nothing can write through it in autocommit after
 * the commit (RFC 6, ADR T5). Statements that would end the transaction or change the session
 * (COMMIT, SET, DDL's implicit commit, CALL of a procedure that commits) are refused, and so are
 * writes to the supervisor's and the task system's own tables, which only their operations write.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { ReadOnlyError, TransactionClosedError } from './errors.ts';
import { firstKeyword } from './read-statement.ts';
import { txQuery } from './tx-query.ts';
import { assertSqliteWriteTargets } from './sqlite/write-targets.ts';
import type { Backend, Tx, TxHandle } from './types.ts';

export type { Tx } from './types.ts';

// DO (MySQL): evaluates expressions inside the transaction (e.g. DO SLEEP(n)), like a SELECT.
const TX_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'SHOW', 'EXPLAIN', 'DESCRIBE', 'DESC', 'INSERT', 'UPDATE', 'DELETE', 'REPLACE', 'DO']);
const WRITE_KEYWORDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'REPLACE', 'WITH']);
// The supervisor's and the task system's tables (not the legacy Topic tables of PR #1490, e.g.
// pc_artifact_processing_pending, which belong to the Topic processor).
const OWN_TABLES = /\b(?:pc_aps_\w+|pc_durable_task\w*|pc_artifact_processing_(?:binding_states|fence_slots|intents|lease_fences|leases|runtime)\w*)\b/i;
const OP = 'fenced transaction';

export function assertTxStatement(sql: unknown): asserts sql is string {
  if (typeof sql !== 'string' || sql.trim() === '') throw new ReadOnlyError(OP, 'an empty statement');
  const keyword = firstKeyword(sql);
  if (!TX_KEYWORDS.has(keyword)) throw new ReadOnlyError(OP, `${keyword || 'this'} statements cannot run in a fenced transaction`);
  if (WRITE_KEYWORDS.has(keyword) && OWN_TABLES.test(sql) && /\b(?:INSERT|UPDATE|DELETE|REPLACE)\b/i.test(sql)) {
    throw new ReadOnlyError(OP, "the supervisor's and the task system's tables are written only by their operations");
  }
}

/** Wraps a driver transaction handle; `end()` revokes it (called when the transaction ends). */
export function scopedTx(raw: TxHandle, backend: Backend): { tx: Tx; end(): void } {
  let open = true;
  const tx: Tx = Object.freeze({
    backend,
    async query(sql: string, params: unknown[] = []) {
      if (!open) throw new TransactionClosedError(OP);
      assertTxStatement(sql);
      // The engine decides on SQLite (issue 40 item 3): the text check above is only an early error.
      if (backend === 'sqlite') assertSqliteWriteTargets(raw as BetterSqlite3.Database, sql, params);
      return txQuery(raw, sql, params);
    },
  });
  return {
    tx,
    end: () => {
      open = false;
    },
  };
}

/** Runs fn with a scoped handle on raw, revoking it when fn settles (the transaction then ends). */
export async function withScopedTx<T>(raw: TxHandle, backend: Backend, fn: (tx: Tx) => Promise<T> | T): Promise<T> {
  const scoped = scopedTx(raw, backend);
  try {
    return await fn(scoped.tx);
  } finally {
    scoped.end();
  }
}
