/**
 * The engine's check of a read handle's statement (issue 40 item 3): the read-only connection
 * refuses writes to the database file, but not everything that writes elsewhere or changes the
 * connection. Measured on better-sqlite3 12 (test/adversarial/sqlite-engine.test.ts): with
 * `PRAGMA query_only = 0` first, `VACUUM INTO '<file>'` wrote a full copy of the database from a
 * read-only connection (and with query_only on it still created the file, empty).
 *
 * So a statement runs only when SQLite reports it read-only (sqlite3_stmt_readonly: VACUUM INTO
 * and every write are not) and its program changes neither the connection nor the transaction
 * (program-facts.ts: PRAGMA, ATTACH, DETACH, BEGIN, SAVEPOINT...). A PRAGMA applies its setting
 * when it is compiled, before any check can see it: the connection of a refused statement is
 * replaced (`recycle`), and so is the connection of an EXPLAIN, whose explained statement was
 * compiled as well.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { type ProgramOp, refusedOperation } from './program-facts.ts';

export interface ReadVerdict {
  /** Why the statement must not run, or null. */
  refusal: string | null;
  /** Whether the connection must be replaced (compiling the statement may have changed it). */
  recycle: boolean;
}

export const WRITES = 'the engine reports that the statement writes (sqlite3_stmt_readonly)';
/** Statements remembered per read handle (cleared whole when full). */
const MAX_VERDICTS = 1000;

/** `stmt` is `sql` prepared on `db`; `verdicts` is the handle's cache by SQL text. */
export function judgeRead(
  db: BetterSqlite3.Database,
  stmt: BetterSqlite3.Statement,
  sql: string,
  params: readonly unknown[],
  verdicts: Map<string, ReadVerdict>,
): ReadVerdict {
  if (!stmt.readonly) return { refusal: WRITES, recycle: true };
  const known = verdicts.get(sql);
  if (known) return known;
  let ops: ProgramOp[];
  try {
    ops = db.prepare(`EXPLAIN ${sql}`).all(...params) as ProgramOp[];
  } catch {
    // It compiled alone but not after EXPLAIN: it is an EXPLAIN itself, which runs nothing.
    return { refusal: null, recycle: true };
  }
  let refusal: string | null = null;
  for (const op of ops) refusal ??= refusedOperation(op);
  const verdict = { refusal, recycle: refusal !== null };
  if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
  verdicts.set(sql, verdict);
  return verdict;
}
