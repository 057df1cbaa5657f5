/**
 * Bounded, asynchronous waiting for the SQLite write lock (issue 17 item 1; RFC 1 "可取消、有限时限").
 * better-sqlite3 is synchronous: a busy_timeout waits on the event loop. The host's connection
 * has a busy_timeout of 0 (measured: even 1 ms sleeps took up to 15 ms on a loaded host) and
 * retries an attempt that found the lock taken after a timer (2 ms doubling, at most 25 ms),
 * releasing its connection meanwhile, until the attempt succeeds or `boundMs` passed; then it
 * fails with DatabaseBusyError. An attempt is retried
 * only when nothing of it was applied (a whole BEGIN IMMEDIATE script, an autocommit statement,
 * the BEGIN IMMEDIATE of a transaction).
 */
import { DatabaseBusyError } from '../errors.ts';

export interface LockWaitOptions {
  /** The longest a host call waits for the lock in all (default 10 s, the former busy_timeout). */
  boundMs: number;
  /** The connection's busy_timeout: the longest one attempt blocks the event loop (default 0). */
  busyTimeoutMs: number;
}

export const HOST_LOCK_WAIT: LockWaitOptions = { boundMs: 10_000, busyTimeoutMs: 0 };

const FIRST_RETRY_MS = 2;
const MAX_RETRY_MS = 25;

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_RECOVERY, _SNAPSHOT, _TIMEOUT). */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** The signal that an attempt found the lock taken and applied nothing. */
export const BUSY = Symbol('busy');

/**
 * Runs `attempt` until it returns something else than BUSY (or throws), waiting between
 * attempts; after `boundMs` it throws DatabaseBusyError.
 */
export async function retryWhileBusy<T>(operation: string, options: LockWaitOptions, attempt: () => Promise<T | typeof BUSY>): Promise<T> {
  const started = performance.now();
  let delay = FIRST_RETRY_MS;
  for (;;) {
    const result = await attempt();
    if (result !== BUSY) return result;
    const waited = performance.now() - started;
    if (waited >= options.boundMs) throw new DatabaseBusyError(operation, waited);
    await new Promise<void>((resolve) => setTimeout(resolve, Math.min(delay, options.boundMs - waited)));
    delay = Math.min(MAX_RETRY_MS, delay * 2);
  }
}
