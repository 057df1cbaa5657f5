/**
 * Bounded, asynchronous waiting for the SQLite write lock (issue 17 item 1; RFC 1 "可取消、有限时限").
 * better-sqlite3 is synchronous: a busy_timeout waits on the event loop. The host's connection
 * has a busy_timeout of 0 (measured: even 1 ms sleeps took up to 15 ms on a loaded host) and
 * retries an attempt that found the lock taken after a shared timer (LockGate), releasing its
 * connection meanwhile, until the attempt succeeds or `boundMs` passed; then it fails with
 * DatabaseBusyError. An attempt is retried
 * only when nothing of it was applied (a whole BEGIN IMMEDIATE script, an autocommit statement,
 * the BEGIN IMMEDIATE of a transaction).
 */
import { DatabaseBusyError } from '../errors.ts';

export interface LockWaitOptions {
  /** The longest a host call waits for the lock in all (lockWaitBoundMs). */
  boundMs: number;
  /** The connection's busy_timeout: the longest one attempt blocks the event loop (default 0). */
  busyTimeoutMs: number;
}

/** The former fixed bound, still the least. */
const MIN_LOCK_WAIT_MS = 10_000;
/** After the budget: the host's watchdog ends the process, the OS frees the lock, the journal rolls back. */
export const LOCK_WAIT_MARGIN_MS = 5000;

/**
 * The longest a writer waits for the SQLite write lock: another family's commit holds it at most
 * its budget (one lease TTL: the host ends a commit past it, issue 40 item 3), so a trigger, a
 * mark-dirty or another commit waits that long plus a margin and then succeeds, never BUSY.
 */
export function lockWaitBoundMs(commitBudgetMs: number): number {
  return Math.max(MIN_LOCK_WAIT_MS, Math.ceil(commitBudgetMs) + LOCK_WAIT_MARGIN_MS);
}

/** The host's lock wait for a commit budget (one lease TTL). */
export function hostLockWait(commitBudgetMs: number): LockWaitOptions {
  return { boundMs: lockWaitBoundMs(commitBudgetMs), busyTimeoutMs: 0 };
}

/** Probes on the next turns of the event loop before the timers start (about a millisecond when idle). */
export const PROMPT_PROBES = 32;
const FIRST_RETRY_MS = 1;
const MAX_RETRY_MS = 25;

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_RECOVERY, _SNAPSHOT, _TIMEOUT). */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/** The signal that an attempt found the lock taken and applied nothing. */
export const BUSY = Symbol('busy');

/**
 * The shared wait of one connection's attempts: after an attempt found the lock taken, every
 * attempt waits for the same probe time instead of probing on its own, so a hundred waiting calls
 * cost one probe per round, not a hundred. The first PROMPT_PROBES probes of a wait come on the
 * next turns of the event loop (setImmediate: other work runs first, nothing sleeps), as a
 * worker's commit holds the lock for a fraction of a millisecond; then a timer of 1 ms doubling,
 * at most 25 ms. A 2 ms first timer cost the task relay a 2.3 ms pause on one claim in six.
 */
export class LockGate {
  private wait: Promise<void> | null = null;
  private delay = FIRST_RETRY_MS;
  /** Prompt probes of the current wait (0 once the lock was found free). */
  private prompt = 0;

  /** True from an attempt that found the lock taken until the next probe time. */
  get closed(): boolean {
    return this.wait !== null;
  }

  /** The lock was found taken: the promise of the next probe time, shared by every waiter. */
  busy(): Promise<void> {
    if (!this.wait) {
      const open = (resolve: () => void) => () => {
        this.wait = null;
        resolve();
      };
      if (this.prompt < PROMPT_PROBES) {
        this.prompt += 1;
        this.wait = new Promise<void>((resolve) => setImmediate(open(resolve)));
      } else {
        this.wait = new Promise<void>((resolve) => setTimeout(open(resolve), this.delay));
        this.delay = Math.min(MAX_RETRY_MS, this.delay * 2);
      }
    }
    return this.wait;
  }

  /** An attempt got the lock: the next wait starts prompt again. */
  free(): void {
    this.delay = FIRST_RETRY_MS;
    this.prompt = 0;
  }
}

/**
 * Runs `attempt` until it returns something else than BUSY (or throws), waiting for the gate
 * between attempts; after `boundMs` it throws DatabaseBusyError. `attempt` should return BUSY
 * without touching the database while the gate is closed.
 */
export async function retryWhileBusy<T>(operation: string, options: LockWaitOptions, gate: LockGate, attempt: () => Promise<T | typeof BUSY>): Promise<T> {
  const started = performance.now();
  for (;;) {
    const result = await attempt();
    if (result !== BUSY) {
      gate.free();
      return result;
    }
    const waited = performance.now() - started;
    if (waited >= options.boundMs) throw new DatabaseBusyError(operation, waited);
    await gate.busy();
  }
}
