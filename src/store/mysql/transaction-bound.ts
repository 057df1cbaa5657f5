/**
 * The server-side bound on how long a store connection's transaction can stay open while its
 * client sends nothing (issue 17 item 3, RFC 1): a worker paused inside ctx.commit keeps its fence
 * row locked for as long as the server keeps its transaction, and a takeover waits for that lock.
 * With the bound at one lease TTL, a takeover waits at most about one TTL after expiry.
 * One setting per engine (COMPATIBILITY row 41).
 */

export type MysqlEngine = 'mariadb' | 'mysql' | 'oceanbase';

/** The lease TTL of the runtime (RuntimeConfig reads and validates it; worker children inherit it). */
export const LEASE_TTL_VARIABLE = 'POWERCONTEXT_SERVER_RUNTIME_ARTIFACT_PROCESSING_LEASE_TTL_SECONDS';
/** The lease TTL default (runtime-config.ts), used when the variable is unset. */
const DEFAULT_BOUND_MS = 15_000;

/** The engine from `SELECT VERSION()`: '10.11.x-MariaDB...', '5.7.25-OceanBase...-v4.x', '8.0.x'. */
export function engineOf(version: string): MysqlEngine {
  if (/oceanbase/i.test(version)) return 'oceanbase';
  if (/mariadb/i.test(version)) return 'mariadb';
  return 'mysql';
}

/** One lease TTL from the environment, else the TTL default. */
export function transactionBoundFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env[LEASE_TTL_VARIABLE]);
  return Number.isFinite(seconds) && seconds >= 1 ? Math.round(seconds * 1000) : DEFAULT_BOUND_MS;
}

export function checkTransactionBound(ms: number): number {
  if (!Number.isInteger(ms) || ms < 1000 || ms > 3_600_000) throw new Error(`transaction bound must be an integer from 1000 to 3600000 ms, got ${ms}`);
  return ms;
}

export interface BoundStatements {
  /** Run once per physical connection, at setup. */
  session: string[];
  /** Run before each transaction of the store, and after it (MySQL only: wait_timeout is not transaction-scoped). */
  open: string[];
  close: string[];
}

/**
 * MariaDB: idle_transaction_timeout (whole seconds; the server closes the connection, which rolls
 * back). OceanBase: ob_trx_idle_timeout (microseconds; the transaction is rolled back). MySQL 8
 * has no idle-transaction timeout: wait_timeout, lowered only while a store transaction is open
 * so idle pooled connections are not closed under the pool.
 */
export function boundStatements(engine: MysqlEngine, boundMs: number): BoundStatements {
  const seconds = Math.ceil(boundMs / 1000);
  switch (engine) {
    case 'mariadb':
      return { session: [`SET SESSION idle_transaction_timeout = ${seconds}`], open: [], close: [] };
    case 'oceanbase':
      return { session: [`SET SESSION ob_trx_idle_timeout = ${boundMs * 1000}`], open: [], close: [] };
    case 'mysql':
      return { session: [], open: [`SET SESSION wait_timeout = ${seconds}`], close: ['SET SESSION wait_timeout = @@GLOBAL.wait_timeout'] };
  }
}

/** A store transaction the server ended before its COMMIT could be sent: nothing of it was committed. */
export class TransactionEndedError extends Error {
  constructor(boundMs: number, options?: { cause?: unknown }) {
    super(
      `the server ended the transaction before it could commit (it stayed open and idle past the ${boundMs} ms transaction bound, or its connection was lost); nothing was committed`,
      options,
    );
    this.name = 'TransactionEndedError';
  }
}

/**
 * True when the command never reached the server: mysql2 refused it on a connection already
 * closed, or writing it failed because the server had reset the connection (a read error after
 * sending would be ambiguous and is not matched).
 */
export function wasClosedBeforeSend(error: unknown): boolean {
  return /closed state|^write (ECONNRESET|EPIPE)\b/i.test((error as Error)?.message ?? '');
}
