/**
 * Typed errors raised by the stored logic. The SQL raises a short stable code
 * (MySQL: SIGNAL SQLSTATE '45000' MESSAGE_TEXT = code; SQLite: RAISE(ABORT, code) through
 * pc_aps_signals); the adapters turn the code into one of these classes, so a lost term can
 * never be mistaken for a boolean result.
 */
export const STORE_ERROR_CODES = [
  'term_lost',
  'scan_stale',
  'invalid_argument',
  'intent_not_found',
  'ack_beyond_request',
  'clean_beyond_dirty',
  'invocation_token_mismatch',
  'cron_fire_in_future',
  'attempt_lost',
  'task_not_found',
  'task_active',
  'cancel_requested',
  'mode_mismatch',
  'maintenance',
  'live_candidate',
  'adoption_done',
  'adoption_conflict',
  'adoption_inconsistent',
  'capacity_not_set',
  // Raised by the adapters for what the database refused on a read handle, or a transaction
  // handle used after its transaction ended (RFC 6: no write path around the fenced commit).
  'read_only',
  'transaction_closed',
] as const;

export type StoreErrorCode = (typeof STORE_ERROR_CODES)[number];

export class StoreError extends Error {
  readonly code: StoreErrorCode;
  readonly operation: string;
  constructor(code: StoreErrorCode, operation: string, message?: string, options?: { cause?: unknown }) {
    super(message ?? `${operation}: ${code}`, options);
    this.name = 'StoreError';
    this.code = code;
    this.operation = operation;
  }
}

/** The caller's term (holder, generation) is not the live one: stop dispatching and committing. */
export class TermLostError extends StoreError {
  constructor(operation: string, options?: { cause?: unknown }) {
    super('term_lost', operation, `${operation}: term lost (the lease is held by another holder or generation, released, or expired)`, options);
    this.name = 'TermLostError';
  }
}

/** The scan generation the caller works on is no longer the binding's scan in progress. */
export class ScanStaleError extends StoreError {
  constructor(operation: string, options?: { cause?: unknown }) {
    super('scan_stale', operation, `${operation}: scan stale (no scan of that generation is in progress)`, options);
    this.name = 'ScanStaleError';
  }
}

/** A durable task write by an attempt that is no longer the task's current, live attempt. */
export class AttemptLostError extends StoreError {
  constructor(operation: string, options?: { cause?: unknown }) {
    super('attempt_lost', operation, `${operation}: attempt lost (the task is not running under this attempt, or its lease expired)`, options);
    this.name = 'AttemptLostError';
  }
}

/** A write (or a statement that is not a read) on a read handle: the database refuses it. */
export class ReadOnlyError extends StoreError {
  constructor(operation: string, detail: string, options?: { cause?: unknown }) {
    super('read_only', operation, `${operation}: refused: ${detail} (a read handle cannot write; commit through ctx.commit)`, options);
    this.name = 'ReadOnlyError';
  }
}

/** A transaction handle used after its transaction committed or rolled back. */
export class TransactionClosedError extends StoreError {
  constructor(operation: string) {
    super('transaction_closed', operation, `${operation}: the transaction of this handle has ended; write only inside the ctx.commit callback`);
    this.name = 'TransactionClosedError';
  }
}

export class InvalidArgumentError extends StoreError {
  constructor(operation: string, detail: string, options?: { cause?: unknown }) {
    super('invalid_argument', operation, `${operation}: invalid argument: ${detail}`, options);
    this.name = 'InvalidArgumentError';
  }
}

const KNOWN = new Set<string>(STORE_ERROR_CODES);

export function isStoreErrorCode(value: string): value is StoreErrorCode {
  return KNOWN.has(value);
}

export function storeErrorFromCode(code: StoreErrorCode, operation: string, cause?: unknown): StoreError {
  switch (code) {
    case 'term_lost':
      return new TermLostError(operation, { cause });
    case 'scan_stale':
      return new ScanStaleError(operation, { cause });
    case 'attempt_lost':
      return new AttemptLostError(operation, { cause });
    case 'invalid_argument':
      return new InvalidArgumentError(operation, 'rejected by the database', { cause });
    default:
      return new StoreError(code, operation, `${operation}: ${code.replace(/_/g, ' ')}`, { cause });
  }
}

/**
 * The database lock was not free within the caller's bound (the SQLite host: another connection
 * holds the write lock). Nothing was written; the call may be retried later (issue 17 item 1).
 */
export class DatabaseBusyError extends Error {
  readonly code = 'database_busy';
  readonly retryable = true;
  readonly operation: string;
  readonly waitedMs: number;
  constructor(operation: string, waitedMs: number, options?: { cause?: unknown }) {
    super(`${operation}: database busy (the write lock was not free within ${Math.round(waitedMs)} ms)`, options);
    this.name = 'DatabaseBusyError';
    this.operation = operation;
    this.waitedMs = waitedMs;
  }
}
