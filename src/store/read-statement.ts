/**
 * What a read handle or a scoped transaction sends: the first keyword of a statement, and the
 * check that a statement is a read (read-handle.ts and its backends; scoped-tx.ts). The database
 * still decides: these refuse before sending, so the session stays read-only.
 */
import { ReadOnlyError } from './errors.ts';

/** The first keywords of a read: what a read handle sends to the database. */
const READ_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'SHOW', 'EXPLAIN', 'DESCRIBE', 'DESC']);

/** Skips whitespace, comments and opening parentheses; returns the first keyword in upper case. */
export function firstKeyword(sql: string): string {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '(') {
      i += 1;
      continue;
    }
    if (sql.startsWith('--', i) || c === '#') {
      const end = sql.indexOf('\n', i);
      if (end < 0) return '';
      i = end + 1;
      continue;
    }
    if (sql.startsWith('/*', i)) {
      // MySQL executes /*! ... */ comments: never treat them as comments.
      if (sql[i + 2] === '!' || sql[i + 2] === '+') return '/*!';
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) return '';
      i = end + 2;
      continue;
    }
    break;
  }
  const match = /^[A-Za-z]+/.exec(sql.slice(i));
  return match ? match[0].toUpperCase() : '';
}

/** Throws ReadOnlyError unless the statement starts like a read. The database still decides. */
export function assertReadStatement(operation: string, sql: unknown): asserts sql is string {
  if (typeof sql !== 'string' || sql.trim() === '') throw new ReadOnlyError(operation, 'an empty statement');
  const keyword = firstKeyword(sql);
  if (!READ_KEYWORDS.has(keyword)) throw new ReadOnlyError(operation, `${keyword || 'this'} is not a read statement`);
  // A read-only transaction still lets MySQL write a server file.
  if (/\bINTO\s+(?:OUTFILE|DUMPFILE)\b/i.test(sql)) throw new ReadOnlyError(operation, 'SELECT ... INTO OUTFILE writes a file');
}
