/**
 * The read handle: the only way a processor, a task handler or a pending-work provider reaches
 * the database besides its fenced commit (RFC 6, ADR T5). Writes are refused by the database
 * itself: on SQLite a connection opened read-only (plus `query_only`), on MySQL/OceanBase a pool
 * whose sessions run every transaction READ ONLY. Statements other than reads (transaction
 * control, SET, CALL, DDL) are refused before they are sent, so the session stays read-only.
 */
import type { DatabaseTarget } from '../config/database-url.ts';
import { ReadOnlyError } from './errors.ts';
import type { Backend } from './types.ts';

export type ReadRow = Record<string, unknown>;

export interface ReadOptions {
  /** Aborts the statement (the connection running it is discarded) and rejects with the reason. */
  signal?: AbortSignal;
}

export interface ReadHandle {
  readonly backend: Backend;
  /** One read statement with bound parameters; ReadOnlyError for anything that is not a read. */
  query(sql: string, params?: unknown[], options?: ReadOptions): Promise<ReadRow[]>;
  close(): Promise<void>;
}

export interface ReadHandleOptions {
  /** Upper bound of one statement on the server (MySQL/OceanBase; default 30 s). */
  statementTimeoutMs?: number;
  /** Connections of the MySQL read pool (default 2). */
  connectionLimit?: number;
  /**
   * SQLite: run reads in a reader process, so a slow read never blocks the caller's event loop
   * and a bound or an abort ends it at once (the host's handle; a worker process reads inline).
   */
  isolated?: boolean;
}

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

/** Opens a read handle on a database target, loading only that backend's driver. */
export async function openReadHandle(target: DatabaseTarget, options: ReadHandleOptions = {}): Promise<ReadHandle> {
  if (target.backend === 'sqlite') {
    if (options.isolated) {
      const { SqliteProcessReadHandle } = await import('./sqlite/sqlite-read-process.ts');
      return new SqliteProcessReadHandle(target.file, options.statementTimeoutMs);
    }
    const { SqliteReadHandle } = await import('./sqlite/sqlite-read-handle.ts');
    return SqliteReadHandle.open(target.file);
  }
  const { MysqlReadHandle } = await import('./mysql/mysql-read-handle.ts');
  const { host, port, user, password, database } = target;
  return MysqlReadHandle.open({ host, port, user, password, database }, options);
}

/** A read handle opened on first use (a processor that never reads costs no connection). */
export function lazyReadHandle(backend: Backend, open: () => Promise<ReadHandle>): ReadHandle & { opened(): boolean } {
  let handle: Promise<ReadHandle> | null = null;
  let closed = false;
  const get = () => {
    if (closed) throw new ReadOnlyError('read handle', 'the read handle is closed');
    handle ??= open().catch((error: unknown) => {
      handle = null;
      throw error;
    });
    return handle;
  };
  return {
    backend,
    async query(sql, params, options) {
      assertReadStatement('read handle', sql);
      return (await get()).query(sql, params, options);
    },
    async close() {
      closed = true;
      const h = handle;
      handle = null;
      if (h) await (await h).close();
    },
    opened: () => handle !== null,
  };
}
