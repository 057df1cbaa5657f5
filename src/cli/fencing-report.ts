/** The start-up line naming what enforces the fencing (issue 40): a warning when only the statement checks do. */
import type { Logger } from '../logging.ts';
import { fencingSummary, type SessionAccounts } from '../store/session-accounts.ts';

export function logFencing(logger: Logger, accounts: SessionAccounts): void {
  const fields = { fencing: accounts.setup, accounts: accounts.source };
  if (accounts.setup === 'filtered') logger.warn({ ...fields, problems: accounts.problems }, fencingSummary(accounts));
  else logger.info(fields, fencingSummary(accounts));
}
