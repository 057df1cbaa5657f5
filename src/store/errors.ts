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
  'cron_fire_in_future',
  'attempt_lost',
  'task_not_found',
  'task_active',
  'mode_mismatch',
  'maintenance',
  'live_candidate',
  'adoption_done',
  'adoption_conflict',
  'adoption_inconsistent',
  'capacity_not_set',
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
