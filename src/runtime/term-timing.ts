/**
 * The term keeper's timing policy (term-keeper.ts), as pure functions of its settings and state:
 * when the next cycle runs and how long one lease statement may take. RFC 8: a leader whose
 * renewal failed retries sooner as its local deadline nears; a statement never outlives it.
 */

/** The shortest bound of one lease statement, whatever the renewal period. */
export const MIN_STATEMENT_BOUND_MS = 1000;

/** A renewal period, at least MIN_STATEMENT_BOUND_MS: the bound of a statement with no deadline to respect. */
export function periodBoundMs(renewEveryMs: number): number {
  return Math.max(MIN_STATEMENT_BOUND_MS, renewEveryMs);
}

/**
 * MySQL/OceanBase: the next cycle after a renewal period, sooner while suspended (half the time
 * left before the local deadline; `remainingMs` is Infinity without a term), never under 10 ms.
 */
export function renewalDelayMs(renewEveryMs: number, remainingMs: number, suspended: boolean): number {
  return Math.max(10, Math.min(renewEveryMs, suspended ? remainingMs / 2 : Infinity));
}

/** SQLite, not leading: 100 ms doubling per failed acquisition, at most a renewal period (at least 1 s). */
export function acquisitionRetryMs(renewEveryMs: number, failures: number): number {
  return Math.min(periodBoundMs(renewEveryMs), 100 * 2 ** Math.min(10, Math.max(0, failures - 1)));
}

/** One lease statement may take a renewal period (at least 1 s), never beyond the local deadline (at least 1 ms). */
export function statementBoundMs(renewEveryMs: number, remainingMs: number): number {
  return Math.max(1, Math.min(remainingMs, periodBoundMs(renewEveryMs)));
}
