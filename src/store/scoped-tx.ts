/**
 * The transaction handle a processor's `ctx.commit`, a task handler's `ctx.commit`/`onComplete`
 * and a failure hook receive: statements run inside the fenced transaction only while it is
 * open. The driver handle is never exposed, so nothing can write through it in autocommit after
 * the commit (RFC 6, ADR T5). Each statement first passes the friendly checks below, read as the
 * server tokenizes it (sql-lexer.ts; switched off by APSUP_UNSAFE_DISABLE_TEXT_CHECKS, see
 * read-statement.ts): statements that would end the transaction or change the session (COMMIT,
 * SET, DDL's implicit commit, CALL, XA, LOCK TABLES, ...) are refused, and so is any statement
 * naming the supervisor's or the task system's own tables, which only their operations touch.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { ReadOnlyError, TransactionClosedError } from './errors.ts';
import {
  LOCK_FUNCTIONS,
  assertNonEmpty,
  calledFunctions,
  commonRefusal,
  firstKeyword,
  intoTarget,
  lockingClause,
  ownTableOf,
  textChecksDisabled,
} from './read-statement.ts';
import { lexSql, type SqlToken } from './sql-lexer.ts';
import { txQuery } from './tx-query.ts';
import { assertSqliteWriteTargets } from './sqlite/write-targets.ts';
import type { Backend, Tx, TxHandle } from './types.ts';

export type { Tx } from './types.ts';

// DO (MySQL): evaluates expressions inside the transaction, like a SELECT. A slow statement
// (DO SLEEP(n)) is bounded by the database, not here: the commit watchdog ends it (issue 40 item 2).
const TX_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'INSERT', 'UPDATE', 'DELETE', 'REPLACE', 'DO']);
const TX_REFUSED_FUNCTIONS = new Set(LOCK_FUNCTIONS);
/** What may stand between INSERT/REPLACE and INTO (MySQL modifiers, SQLite's OR <conflict>). */
const INSERT_WORDS = new Set(['INSERT', 'REPLACE', 'LOW_PRIORITY', 'DELAYED', 'HIGH_PRIORITY', 'IGNORE', 'OR', 'ROLLBACK', 'ABORT', 'FAIL']);
const OP = 'fenced transaction';

/** An INTO that is not the target of INSERT/REPLACE: SELECT ... INTO (a file or a variable). */
function selectInto(tokens: SqlToken[], i: number): string | null {
  const target = intoTarget(tokens, i);
  if (target) return target;
  let j = i - 1;
  while (j >= 0 && tokens[j]!.kind === 'word' && INSERT_WORDS.has(tokens[j]!.value) && !['INSERT', 'REPLACE'].includes(tokens[j]!.value)) j -= 1;
  const verb = tokens[j];
  return verb?.kind === 'word' && (verb.value === 'INSERT' || verb.value === 'REPLACE') ? null : 'SELECT ... INTO writes a file or a variable';
}

/** Why a statement must not run in a fenced transaction, or null. */
export function txRefusal(sql: string, params?: unknown): string | null {
  const lexed = lexSql(sql);
  const common = commonRefusal(lexed, params);
  if (common) return common;
  const keyword = firstKeyword(lexed);
  if (!TX_KEYWORDS.has(keyword)) return `${keyword || 'this'} statements cannot run in a fenced transaction`;
  const { tokens } = lexed;
  for (const t of tokens) {
    const own = ownTableOf(t);
    if (!own) continue;
    // RFC 6, ADR T5: only their operations touch them; a lock on them would hold the term's renewal.
    const locking = lockingClause(tokens);
    return locking
      ? `${locking} on ${own} would hold the supervisor's rows (its term renewal waits on them)`
      : `the supervisor's and the task system's tables (${own}) are read and written only by their operations`;
  }
  for (let i = 0; i < tokens.length; i += 1) {
    if (tokens[i]!.kind === 'word' && tokens[i]!.value === 'INTO') {
      const into = selectInto(tokens, i);
      if (into) return into;
    }
  }
  const refused = calledFunctions(tokens).find((f) => TX_REFUSED_FUNCTIONS.has(f));
  if (refused) return `${refused}() takes a lock or reads a file outside the transaction`;
  return null;
}

/**
 * Throws ReadOnlyError unless the statement may run in a fenced transaction: one SELECT, WITH,
 * VALUES, TABLE, INSERT, UPDATE, DELETE, REPLACE or DO naming none of the supervisor's or the task
 * system's tables. An early error only: the processor account's grants (MySQL) and the compiled
 * program (SQLite) decide.
 */
export function assertTxStatement(sql: unknown, params?: unknown): asserts sql is string {
  assertNonEmpty(OP, sql);
  if (textChecksDisabled()) return;
  const reason = txRefusal(sql, params);
  if (reason) throw new ReadOnlyError(OP, reason);
}

/** Wraps a driver transaction handle; `end()` revokes it (called when the transaction ends). */
export function scopedTx(raw: TxHandle, backend: Backend): { tx: Tx; end(): void } {
  let open = true;
  const tx: Tx = Object.freeze({
    backend,
    async query(sql: string, params: unknown[] = []) {
      if (!open) throw new TransactionClosedError(OP);
      assertTxStatement(sql, params);
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
