/**
 * A transaction with a time bound (issue 17 item 4: failure hooks). When fn has not finished
 * within boundMs the transaction is rolled back and the caller gets TransactionBoundError at once;
 * the handle fn was given refuses every later statement, so an abandoned callback that wakes up
 * can never write outside (or into another) transaction. On SQLite this releases the store's
 * single connection (the runner shares it with the host) within the bound; on MySQL the
 * connection is destroyed (the server rolls back; a statement still running on the server, e.g.
 * a lock wait, is ended with KILL). A callback blocked synchronously cannot be cut short here.
 */
import type { PoolConnection } from 'mysql2/promise';
import type { BaseStore } from '../store/base-store.ts';
import { isSqliteConnection } from '../store/tx-query.ts';
import type { TxHandle } from '../store/types.ts';

export class TransactionBoundError extends Error {
  constructor(readonly boundMs: number) {
    super(`the transaction did not finish within ${boundMs} ms; rolled back`);
    this.name = 'TransactionBoundError';
  }
}

/** A proxy of tx (and of statements it prepares) that refuses any use once closed. */
export function guardHandle(tx: TxHandle): { handle: TxHandle; close(): void } {
  let open = true;
  const check = () => {
    if (!open) throw new Error('this transaction handle is closed (its transaction ended); the statement was refused');
  };
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, prop) {
        check();
        const value = Reflect.get(t, prop, t) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          check();
          const r = (value as (...a: unknown[]) => unknown).apply(t, args);
          return prop === 'prepare' && r && typeof r === 'object' ? wrap(r) : r;
        };
      },
    });
  return {
    handle: wrap(tx as object) as TxHandle,
    close: () => {
      open = false;
    },
  };
}

export async function boundedTransaction<T>(store: BaseStore, boundMs: number, fn: (tx: TxHandle, guarded: TxHandle) => Promise<T>): Promise<T> {
  return store.transaction(async (tx) => {
    const guard = guardHandle(tx);
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TransactionBoundError(boundMs)), boundMs);
    });
    try {
      return await Promise.race([fn(tx, guard.handle), bound]);
    } catch (error) {
      if (error instanceof TransactionBoundError && !isSqliteConnection(tx)) {
        const conn = tx as PoolConnection;
        const threadId = conn.threadId;
        conn.destroy();
        // A statement still running server-side keeps its locks until it ends: end it now.
        await store.domainQuery('KILL ?', [threadId]).catch(() => undefined);
      }
      throw error;
    } finally {
      clearTimeout(timer);
      guard.close();
    }
  });
}
