/**
 * The log line of each lease event of a term keeper (issue 17 item 7): one message per event,
 * figures rounded to whole milliseconds, and the failing statement named in its timeout text.
 */
import type { Logger } from '../logging.ts';
import type { Term } from '../store/types.ts';

export type LeaseStatement = 'acquisition' | 'renewal' | 'invalidation';

/** A lease statement that did not answer within its bound. */
export class LeaseTimeoutError extends Error {
  readonly statement: LeaseStatement;
  constructor(statement: LeaseStatement, ms: number) {
    super(`lease ${statement} did not answer within ${Math.round(ms)} ms`);
    this.name = 'LeaseTimeoutError';
    this.statement = statement;
  }
}

export const LEASE_MESSAGES = {
  acquired: 'term acquired; recovering from persisted state',
  standby: 'standby: another candidate holds the term',
  lost: 'term lost; dispatch stopped',
  acquisitionFailed: 'term acquisition failed; retrying',
  invalidationFailed: 'invalidation of the given-up term failed; retrying before competing again',
  renewalFailed: 'lease renewal failed; dispatch suspended',
  renewalFailedAgain: 'lease renewal failed again; dispatch stays suspended',
  renewalResumed: 'lease renewed; dispatch resumed',
  lateRenewal: 'lease renewal answered after the term was given up; ignored',
  shutdownInvalidationFailed: 'term invalidation at shutdown failed; the lease expires on its own',
} as const;

const ms = (value: number): number => Math.max(0, Math.round(value));

function errorFields(error: unknown): { errorType: string; err: string } {
  const e = error as Error;
  return { errorType: e?.name ?? 'Error', err: e?.message ?? String(error) };
}

function termFields(term: Term): Record<string, unknown> {
  return { supervisorKey: term.supervisorKey, holderId: term.holderId, supervisorGeneration: term.supervisorGeneration };
}

export class LeaseLog {
  constructor(
    private readonly logger: Logger,
    private readonly supervisorKey: string,
  ) {}

  acquired(term: Term): void {
    this.logger.info(termFields(term), LEASE_MESSAGES.acquired);
  }

  standby(leader: string | null): void {
    this.logger.info({ supervisorKey: this.supervisorKey, leader }, LEASE_MESSAGES.standby);
  }

  lost(term: Term, reason: string): void {
    this.logger.warn({ ...termFields(term), reason }, LEASE_MESSAGES.lost);
  }

  acquisitionFailed(error: unknown, attempt: number, retryInMs: number): void {
    this.logger.warn({ supervisorKey: this.supervisorKey, ...errorFields(error), attempt, retryInMs: ms(retryInMs) }, LEASE_MESSAGES.acquisitionFailed);
  }

  invalidationFailed(lost: Term, error: unknown, retryInMs: number): void {
    this.logger.warn({ ...termFields(lost), ...errorFields(error), retryInMs: ms(retryInMs) }, LEASE_MESSAGES.invalidationFailed);
  }

  /** A failed renewal that suspends dispatch (first) or keeps it suspended (again). */
  renewalFailed(term: Term, error: unknown, first: boolean, consecutiveFailures: number, remainingMs: number, retryInMs: number): void {
    this.logger.warn(
      {
        ...termFields(term),
        ...errorFields(error),
        consecutiveFailures,
        remainingMs: ms(remainingMs),
        retryInMs: ms(retryInMs),
      },
      first ? LEASE_MESSAGES.renewalFailed : LEASE_MESSAGES.renewalFailedAgain,
    );
  }

  renewalResumed(term: Term): void {
    this.logger.info(termFields(term), LEASE_MESSAGES.renewalResumed);
  }

  lateRenewal(term: Term, error: unknown | null): void {
    this.logger.info(
      { ...termFields(term), outcome: error === null ? 'renewed' : 'failed', ...(error === null ? {} : errorFields(error)) },
      LEASE_MESSAGES.lateRenewal,
    );
  }

  shutdownInvalidationFailed(term: Term, error: unknown): void {
    this.logger.warn({ ...termFields(term), ...errorFields(error) }, LEASE_MESSAGES.shutdownInvalidationFailed);
  }
}
