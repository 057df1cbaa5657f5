/**
 * The read handle: the only way a processor, a task handler or a pending-work provider reaches
 * the database besides its fenced commit (RFC 6, ADR T5). Writes are refused by the database
 * itself: on SQLite a connection opened read-only (plus `query_only`), on MySQL/OceanBase a pool
 * whose sessions run every transaction READ ONLY. Statements other than reads (transaction
 * control, SET, CALL, DDL) are refused before they are sent, so the session stays read-only.
 */
import type { DatabaseTarget } from '../config/database-url.ts';
import { ReadOnlyError } from './errors.ts';
import { assertReadStatement } from './read-statement.ts';
import type { Backend, ReadHandle, ReadHandleOptions } from './types.ts';

export type { ReadHandle } from './types.ts';

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
      assertReadStatement('read handle', sql, params);
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
