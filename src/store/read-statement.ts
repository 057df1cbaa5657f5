/**
 * The friendly early checks of what a read handle (here) and a fenced transaction (scoped-tx.ts)
 * send: a statement is read as the server tokenizes it (sql-lexer.ts), never matched as text.
 * The guarantees are the database's (restricted accounts, read-only sessions, SQLite's engine
 * checks: issue 40); these checks only refuse earlier and more clearly.
 *
 * APSUP_UNSAFE_DISABLE_TEXT_CHECKS=1, read at each call, turns these checks off (an empty or
 * non-string statement is still refused). It exists for the adversarial tests (test/adversarial/),
 * which prove that the database refuses each attack on its own. It weakens only the friendly
 * layer of the process that sets it, never a database guarantee; never set it in production.
 */
import { ReadOnlyError } from './errors.ts';
import { isOwnTable } from './own-tables.ts';
import { lexSql, type LexedSql, type SqlToken } from './sql-lexer.ts';

export const TEXT_CHECKS_SWITCH = 'APSUP_UNSAFE_DISABLE_TEXT_CHECKS';

/** Whether the text checks are off in this process (the adversarial tests only). */
export function textChecksDisabled(): boolean {
  return process.env[TEXT_CHECKS_SWITCH] === '1';
}

/** The first keywords of a read: what a read handle sends to the database. */
const READ_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'SHOW', 'EXPLAIN', 'DESCRIBE', 'DESC']);
/** Write verbs a read never contains (a WITH can lead into UPDATE/DELETE; EXPLAIN ANALYZE runs one). */
const WRITE_VERBS = new Set(['INSERT', 'UPDATE', 'DELETE', 'REPLACE', 'MERGE']);
/** Functions that wait, lock, or read server files: never in a read (the lock ones never in a commit either). */
export const LOCK_FUNCTIONS = ['GET_LOCK', 'RELEASE_LOCK', 'RELEASE_ALL_LOCKS', 'LOAD_FILE', 'LOAD_EXTENSION'];
const READ_REFUSED_FUNCTIONS = new Set([
  ...LOCK_FUNCTIONS,
  'SLEEP',
  'BENCHMARK',
  'MASTER_POS_WAIT',
  'SOURCE_POS_WAIT',
  'MASTER_GTID_WAIT',
  'WAIT_FOR_EXECUTED_GTID_SET',
  'WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS',
]);

/** Throws ReadOnlyError(operation, reason) unless sql is a non-empty string. */
export function assertNonEmpty(operation: string, sql: unknown): asserts sql is string {
  if (typeof sql !== 'string' || sql.trim() === '') throw new ReadOnlyError(operation, 'an empty statement');
}

/** The first keyword in upper case ('' when none; '/*!' when an executable comment or hint comes first), skipping `(`. */
export function firstKeyword(sql: string | LexedSql): string {
  const lexed = typeof sql === 'string' ? lexSql(sql) : sql;
  const first = lexed.tokens.find((t) => t.statement === 0 && !(t.kind === 'punct' && t.value === '('));
  if (lexed.executableComments.some((c) => !first || c.start < first.start)) return '/*!';
  return first?.kind === 'word' ? first.value : '';
}

const isWord = (t: SqlToken | undefined, ...words: string[]) => t?.kind === 'word' && words.includes(t.value);
const isPunct = (t: SqlToken | undefined, p: string) => t?.kind === 'punct' && t.value === p;

/** Names of the functions called in the statement (a word or quoted name followed by `(`), upper case. */
export function calledFunctions(tokens: SqlToken[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < tokens.length; i += 1) {
    const t = tokens[i]!;
    if ((t.kind === 'word' || t.kind === 'identifier') && isPunct(tokens[i + 1], '(')) out.push(t.value.toUpperCase());
  }
  return out;
}

/** The locking clause of a statement (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE), or null. */
export function lockingClause(tokens: SqlToken[]): string | null {
  for (let i = 0; i + 1 < tokens.length; i += 1) {
    const t = tokens[i]!;
    if (isWord(t, 'FOR') && isWord(tokens[i + 1], 'UPDATE', 'SHARE')) return `FOR ${tokens[i + 1]!.value}`;
    if (isWord(t, 'LOCK') && isWord(tokens[i + 1], 'IN') && isWord(tokens[i + 2], 'SHARE') && isWord(tokens[i + 3], 'MODE')) return 'LOCK IN SHARE MODE';
  }
  return null;
}

/** What `INTO` at tokens[i] leads to when it writes a server file or a variable, else null. */
export function intoTarget(tokens: SqlToken[], i: number): string | null {
  const next = tokens[i + 1];
  if (isWord(next, 'OUTFILE', 'DUMPFILE')) return `INTO ${next!.value} writes a server file`;
  if (next?.kind === 'variable') return 'SELECT ... INTO @variable sets a session variable';
  return null;
}

/** An own table named by a token: a name, a quoted name, a part of a qualified one, or a string SQLite would take for a name. */
export function ownTableOf(t: SqlToken): string | null {
  const names = t.kind === 'word' || t.kind === 'identifier' ? [t.value, ...t.value.split('.')] : t.kind === 'string' ? [t.value, t.raw] : [];
  for (const name of names) {
    const n = name.trim();
    if (/^[A-Za-z0-9_$]+$/.test(n) && isOwnTable(n)) return n.toLowerCase();
  }
  return null;
}

function describeParam(value: unknown, seen: Set<unknown>, depth: number): string | null {
  if (value === null || typeof value !== 'object' || seen.has(value) || depth > 8) return null;
  seen.add(value);
  if (typeof (value as { toSqlString?: unknown }).toSqlString === 'function') return 'a parameter with toSqlString() is spliced into the statement as SQL';
  if (value instanceof Date || ArrayBuffer.isView(value)) return null;
  const entries: Array<[unknown, unknown]> =
    value instanceof Map ? [...value.entries()] : Array.isArray(value) || value instanceof Set ? [...value].map((v) => [null, v]) : Object.entries(value);
  for (const [key, v] of entries) {
    // The MySQL driver writes an object as `key` = value pairs, a dotted key as a qualified name.
    if (typeof key === 'string' && key.split('.').some((part) => isOwnTable(part.trim()))) {
      return `a parameter's key names the supervisor's table ${key}`;
    }
    const inner = describeParam(v, seen, depth + 1);
    if (inner) return inner;
  }
  return null;
}

/**
 * The refusals shared by reads and fenced transactions: executable comments and hints, what the
 * dialects read differently, unterminated constructs, more than one statement, `??`, and
 * parameters the MySQL driver would splice in as SQL or as names.
 */
export function commonRefusal(lexed: LexedSql, params?: unknown): string | null {
  const exec = lexed.executableComments[0];
  if (exec) {
    return `/*${exec.marker}${exec.version} ... */ is code to MySQL/MariaDB (an executable or version comment, or an optimizer hint); write plain SQL`;
  }
  if (lexed.unterminated) return `an unterminated ${lexed.unterminated.construct}`;
  const d = lexed.disagreements[0];
  if (d) return `${d.what} at offset ${d.at}: MySQL/MariaDB and SQLite read it differently`;
  if (lexed.statementCount > 1) return 'more than one statement';
  const { tokens } = lexed;
  for (let i = 0; i + 1 < tokens.length; i += 1) {
    if (isPunct(tokens[i], '?') && isPunct(tokens[i + 1], '?') && tokens[i]!.end === tokens[i + 1]!.start) {
      return '`??` has the MySQL driver splice a name into the statement; write the name in the statement';
    }
  }
  return describeParam(params, new Set(), 0);
}

/** Why a read must not be sent, or null. */
export function readRefusal(sql: string, params?: unknown): string | null {
  const lexed = lexSql(sql);
  const common = commonRefusal(lexed, params);
  if (common) return common;
  const keyword = firstKeyword(lexed);
  if (!READ_KEYWORDS.has(keyword)) return `${keyword || 'this'} is not a read statement`;
  const { tokens } = lexed;
  const locking = lockingClause(tokens);
  if (locking) return `a read takes no row locks (${locking})`;
  for (let i = 0; i < tokens.length; i += 1) {
    const t = tokens[i]!;
    if (isWord(t, 'INTO')) return intoTarget(tokens, i) ?? 'SELECT ... INTO writes a file or a variable';
    if (t.kind === 'word' && WRITE_VERBS.has(t.value) && !isPunct(tokens[i + 1], '(')) return `a read never writes (${t.value})`;
  }
  const refused = calledFunctions(tokens).find((f) => READ_REFUSED_FUNCTIONS.has(f));
  if (refused) return `${refused}() waits, locks or reads server files`;
  return null;
}

/** Throws ReadOnlyError unless the statement is a read. The database still decides. */
export function assertReadStatement(operation: string, sql: unknown, params?: unknown): asserts sql is string {
  assertNonEmpty(operation, sql);
  if (textChecksDisabled()) return;
  const reason = readRefusal(sql, params);
  if (reason) throw new ReadOnlyError(operation, reason);
}
