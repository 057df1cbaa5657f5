/**
 * A statement read the way MySQL/MariaDB tokenize it (sql_lex.cc), for the friendly checks of the
 * read handle and the fenced transaction (read-statement.ts, scoped-tx.ts; issue 40 item 1). The
 * database still decides; this only makes the early errors see what the server will run:
 * - `/* ... *\/` is whitespace (`INTO/**\/OUTFILE` is INTO OUTFILE); it does not nest;
 * - `/*! ... *\/`, `/*!NNNNN ... *\/`, `/*M! ... *\/`, `/*M!NNNNNN ... *\/` and the hint `/*+ ... *\/`
 *   are CODE (MariaDB runs `/*M!`, both run `/*!`): their content is lexed as code and each is
 *   reported;
 * - `-- ` is a comment only when the dashes are followed by a control character, a space or the
 *   end (`5--3` is 5 - -3); `#` runs to the end of the line; both end at `\n` only;
 * - strings in '...' and "..." (the store's sql_mode has neither ANSI_QUOTES nor
 *   NO_BACKSLASH_ESCAPES): backslash escapes and doubled quotes; identifiers in backticks (doubled
 *   backtick) and, for SQLite, in [brackets]; `;` separates statements.
 * Where SQLite (the other backend) reads a construct differently, it is listed in `disagreements`:
 * `--x` (a comment to SQLite), `#` (code to SQLite), a quote escaped by a backslash (the end of the
 * string to SQLite), a NUL (SQLite stops reading there).
 */

export type TokenKind = 'word' | 'identifier' | 'string' | 'number' | 'variable' | 'punct';

export interface SqlToken {
  kind: TokenKind;
  /**
   * word: upper-cased; identifier: the name unquoted; string: the content as MySQL reads it;
   * variable: the name after `@` / `@@`; number, punct: the text.
   */
  value: string;
  /** string: the content as SQLite reads it (no backslash escapes); otherwise the value. */
  raw: string;
  start: number;
  end: number;
  /** 0-based index of the statement the token belongs to. */
  statement: number;
  /** Inside an executable/version comment or an optimizer hint. */
  executable: boolean;
}

export interface ExecutableComment {
  start: number;
  /** `!` (MySQL and MariaDB), `M!` (MariaDB), `+` (an optimizer hint). */
  marker: '!' | 'M!' | '+';
  /** The version digits after the marker ('' when none). */
  version: string;
}

export interface LexedSql {
  tokens: SqlToken[];
  executableComments: ExecutableComment[];
  hasExecutableComment: boolean;
  /** Statements with at least one token (`SELECT 1;` is one, `SELECT 1; SELECT 2` two). */
  statementCount: number;
  unterminated: { construct: 'string' | 'identifier' | 'comment' | 'executable comment'; start: number } | null;
  /** Constructs MySQL/MariaDB and SQLite read differently. */
  disagreements: Array<{ at: number; what: string }>;
}

const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);
const isDigit = (c: number) => c >= 48 && c <= 57;
// MySQL identifiers: ASCII letters, digits, `_`, `$` and every character above U+007F.
const isIdent = (c: number) => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c >= 128;
const NUMBER = /0x[0-9a-f]+|0b[01]+|\d+(?:\.\d*)?(?:e[+-]?\d+)?/iy;
const ESCAPES: Record<string, string> = { '0': '\0', b: '\b', n: '\n', r: '\r', t: '\t', Z: '\x1a', '%': '\\%', _: '\\_' };

export function lexSql(sql: string): LexedSql {
  const n = sql.length;
  const out: LexedSql = { tokens: [], executableComments: [], hasExecutableComment: false, statementCount: 0, unterminated: null, disagreements: [] };
  let statement = 0;
  let execDepth = 0;
  let i = 0;
  const push = (kind: TokenKind, value: string, start: number, end: number, raw = value) => {
    out.tokens.push({ kind, value, raw, start, end, statement, executable: execDepth > 0 });
  };
  const lineEnd = (from: number) => {
    const e = sql.indexOf('\n', from);
    return e < 0 ? n : e + 1;
  };
  /** A quoted run from `start` (the opening quote): [end, mysql content, sqlite content], or null if unterminated. */
  const quoted = (start: number, q: string, backslash: boolean): [number, string, string] | null => {
    let value = '';
    let raw = '';
    for (let j = start + 1; j < n; ) {
      const ch = sql[j]!;
      if (backslash && ch === '\\' && j + 1 < n) {
        const next = sql[j + 1]!;
        // SQLite (and NO_BACKSLASH_ESCAPES) end the string at this quote: MySQL does not.
        if (next === q) out.disagreements.push({ at: j, what: 'a quote escaped by a backslash' });
        value += ESCAPES[next] ?? next;
        raw += ch + next;
        j += 2;
        continue;
      }
      if (ch === q) {
        if (sql[j + 1] !== q) return [j + 1, value, raw];
        value += q;
        raw += q;
        j += 2;
        continue;
      }
      value += ch;
      raw += ch;
      j += 1;
    }
    return null;
  };
  const fail = (construct: NonNullable<LexedSql['unterminated']>['construct'], start: number) => {
    out.unterminated = { construct, start };
    i = n;
  };

  while (i < n) {
    const c = sql.charCodeAt(i);
    const ch = sql[i]!;
    if (isSpace(c)) {
      i += 1;
    } else if (c === 0) {
      out.disagreements.push({ at: i, what: 'a NUL character' });
      i += 1;
    } else if (execDepth > 0 && sql.startsWith('*/', i)) {
      execDepth -= 1;
      i += 2;
    } else if (sql.startsWith('/*', i)) {
      const m = sql[i + 2];
      const marker = m === '!' ? '!' : m === '+' ? '+' : m === 'M' && sql[i + 3] === '!' ? 'M!' : null;
      if (marker) {
        let j = i + 2 + marker.length;
        const from = j;
        while (j < n && isDigit(sql.charCodeAt(j))) j += 1;
        out.executableComments.push({ start: i, marker, version: sql.slice(from, j) });
        out.hasExecutableComment = true;
        execDepth += 1;
        i = j;
      } else {
        const end = sql.indexOf('*/', i + 2);
        if (end < 0) fail('comment', i);
        else i = end + 2;
      }
    } else if (ch === '#') {
      out.disagreements.push({ at: i, what: 'a # comment (code to SQLite; write -- or /* */ instead)' });
      i = lineEnd(i);
    } else if (ch === '-' && sql[i + 1] === '-') {
      const after = sql.charCodeAt(i + 2);
      if (Number.isNaN(after) || after <= 32 || after === 127) {
        i = lineEnd(i);
      } else {
        out.disagreements.push({ at: i, what: '`--` without a space after it (a comment to SQLite, two minus signs to MySQL)' });
        push('punct', '-', i, i + 1);
        i += 1;
      }
    } else if (ch === ';') {
      if (out.tokens.at(-1)?.statement === statement) statement += 1;
      i += 1;
    } else if (ch === "'" || ch === '"') {
      const r = quoted(i, ch, true);
      if (!r) fail('string', i);
      else {
        push('string', r[1], i, r[0], r[2]);
        i = r[0];
      }
    } else if (ch === '`') {
      const r = quoted(i, '`', false);
      if (!r) fail('identifier', i);
      else {
        push('identifier', r[1], i, r[0]);
        i = r[0];
      }
    } else if (ch === '[') {
      const end = sql.indexOf(']', i + 1);
      if (end < 0) fail('identifier', i);
      else {
        push('identifier', sql.slice(i + 1, end), i, end + 1);
        i = end + 1;
      }
    } else if (ch === '@') {
      let j = i + 1;
      if (sql[j] === '@') j += 1;
      const q = sql[j];
      if (j === i + 1 && (q === "'" || q === '"' || q === '`')) {
        const r = quoted(j, q, q !== '`');
        if (!r) {
          fail(q === '`' ? 'identifier' : 'string', j);
          continue;
        }
        push('variable', r[1], i, r[0]);
        i = r[0];
      } else {
        const from = j;
        while (j < n && (isIdent(sql.charCodeAt(j)) || sql[j] === '.')) j += 1;
        push('variable', sql.slice(from, j), i, j);
        i = j;
      }
    } else if (isDigit(c)) {
      NUMBER.lastIndex = i;
      let j = i + NUMBER.exec(sql)![0].length;
      if (j < n && isIdent(sql.charCodeAt(j))) {
        // MySQL: an identifier may start with digits (`1e`, `123abc`).
        while (j < n && isIdent(sql.charCodeAt(j))) j += 1;
        push('word', sql.slice(i, j).toUpperCase(), i, j, sql.slice(i, j));
      } else push('number', sql.slice(i, j), i, j);
      i = j;
    } else if (isIdent(c)) {
      let j = i + 1;
      while (j < n && isIdent(sql.charCodeAt(j))) j += 1;
      push('word', sql.slice(i, j).toUpperCase(), i, j, sql.slice(i, j));
      i = j;
    } else {
      push('punct', ch, i, i + 1);
      i += 1;
    }
  }
  if (execDepth > 0 && !out.unterminated) out.unterminated = { construct: 'executable comment', start: out.executableComments.at(-1)!.start };
  out.statementCount = new Set(out.tokens.map((t) => t.statement)).size;
  return out;
}
