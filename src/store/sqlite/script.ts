/**
 * Loads sql/sqlite/<op>.sql and runs it on a better-sqlite3 handle. A script is a sequence of
 * statements with named parameters; `BEGIN IMMEDIATE;` and `COMMIT;` lines mark the operations
 * that own their transaction. The result of a script is the list of row sets of its statements
 * that return rows, in order (most operations have exactly one). A failing check raises through the pc_aps_signals trigger; the runner then rolls
 * back the transaction it opened and rethrows the typed error.
 */
import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { SQLITE_SCRIPTS_DIR } from '../../paths.ts';
import { splitSqlChunks, stripSqlComments } from '../../sql-split.ts';
import { isStoreErrorCode, storeErrorFromCode } from '../errors.ts';
import { DONE_IF_ROWS, expandIncludes } from './script-include.ts';
import type { Row } from '../rows.ts';

export interface SqliteScript {
  name: string;
  ownsTransaction: boolean;
  statements: string[];
  /**
   * Indexes of the statements marked `-- @done-if-rows`: when one returns a row, its rows are the
   * script's result and the statements after it do not run (a fast path whose guard holds every
   * condition of the full path; the full path runs only when it wrote nothing).
   */
  doneIfRows: ReadonlySet<number>;
}

const scripts = new Map<string, SqliteScript>();

/** The text of sql/sqlite/<name>.sql with its `-- @include` lines expanded (script-include.ts). */
export function sqliteScriptText(name: string): string {
  return expandIncludes(name, (other) => fs.readFileSync(path.join(SQLITE_SCRIPTS_DIR, `${other}.sql`), 'utf8'));
}

export function loadSqliteScript(name: string): SqliteScript {
  let script = scripts.get(name);
  if (script) return script;
  script = parseSqliteScript(name, sqliteScriptText(name));
  scripts.set(name, script);
  return script;
}

/** A script's statements from its expanded text: the transaction lines taken out, the fast paths marked. */
export function parseSqliteScript(name: string, text: string): SqliteScript {
  const chunks = splitSqlChunks(text);
  const all = chunks.map(stripSqlComments);
  const isBegin = (s: string) => /^BEGIN\s+IMMEDIATE$/i.test(s);
  const isCommit = (s: string) => /^COMMIT$/i.test(s);
  const ownsTransaction = all.some(isBegin);
  if (ownsTransaction && (!isBegin(all[0]) || !isCommit(all[all.length - 1]))) {
    throw new Error(`sql/sqlite/${name}.sql: BEGIN IMMEDIATE must be the first statement and COMMIT the last`);
  }
  const kept = all.flatMap((statement, i) => (isBegin(statement) || isCommit(statement) ? [] : [i]));
  const statements = kept.map((i) => all[i]);
  const doneIfRows = new Set<number>();
  kept.forEach((chunk, i) => {
    if (!DONE_IF_ROWS.test(chunks[chunk])) return;
    if (!/\bRETURNING\b|^\s*SELECT\b/i.test(statements[i])) throw new Error(`sql/sqlite/${name}.sql: a -- @done-if-rows statement must return rows`);
    doneIfRows.add(i);
  });
  return { name, ownsTransaction, statements, doneIfRows };
}

type Prepared = BetterSqlite3.Statement[];
const preparedByDb = new WeakMap<BetterSqlite3.Database, Map<string, Prepared>>();

function prepared(db: BetterSqlite3.Database, script: SqliteScript): Prepared {
  let byName = preparedByDb.get(db);
  if (!byName) {
    byName = new Map();
    preparedByDb.set(db, byName);
  }
  let list = byName.get(script.name);
  if (!list) {
    list = script.statements.map((sql) => db.prepare(sql));
    byName.set(script.name, list);
  }
  return list;
}

export function mapSqliteError(operation: string, error: unknown): unknown {
  const e = error as { code?: string; message?: string };
  if (e && e.code === 'SQLITE_CONSTRAINT_TRIGGER' && e.message && isStoreErrorCode(e.message)) {
    return storeErrorFromCode(e.message, operation, error);
  }
  return error;
}

/** Runs the statements of a script on db (no transaction handling). */
export function runStatements(db: BetterSqlite3.Database, script: SqliteScript, params: Record<string, unknown>): Row[][] {
  const sets: Row[][] = [];
  const list = prepared(db, script);
  for (let i = 0; i < list.length; i++) {
    const statement = list[i];
    if (!statement.reader) {
      statement.run(params);
      continue;
    }
    const rows = statement.all(params) as Row[];
    if (!script.doneIfRows.has(i)) sets.push(rows);
    else if (rows.length > 0) return [rows]; // the fast path wrote: nothing after it runs
  }
  return sets;
}

/**
 * Runs a script: inside the caller's open transaction when `inCallerTransaction`, otherwise
 * inside its own BEGIN IMMEDIATE ... COMMIT when it writes (read-only scripts run as is).
 */
export function runSqliteScript(
  db: BetterSqlite3.Database,
  name: string,
  params: Record<string, unknown>,
  options: { inCallerTransaction: boolean; writes: boolean; begin?: (db: BetterSqlite3.Database) => void },
): Row[][] {
  const script = loadSqliteScript(name);
  if (options.inCallerTransaction) {
    if (!db.inTransaction) throw new Error(`${name}: the caller's handle has no open transaction (use BEGIN IMMEDIATE)`);
    try {
      return runStatements(db, script, params);
    } catch (error) {
      throw mapSqliteError(name, error);
    }
  }
  if (!options.writes && !script.ownsTransaction) {
    return runStatements(db, script, params);
  }
  if (options.begin) options.begin(db);
  else db.exec('BEGIN IMMEDIATE');
  try {
    const rows = runStatements(db, script, params);
    db.exec('COMMIT');
    return rows;
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw mapSqliteError(name, error);
  }
}
