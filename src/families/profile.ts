/**
 * Reference family in the manner of Profile: a cron schedule with a time zone (02:00
 * Asia/Shanghai); an invocation turns new signals into one candidate awaiting review, at most
 * once per cron fire. Candidates are never published by the supervisor.
 */
import path from 'node:path';
import { SRC_DIR } from '../paths.ts';
import type { FamilyRegistration } from '../registry/registration.ts';
import type { Store, TxHandle } from '../store/types.ts';
import { appendJournal, journalAheadProvider } from './domain.ts';

export const PROFILE_BINDING = 'profile.candidates';

export const profile: FamilyRegistration = {
  bindingName: PROFILE_BINDING,
  family: 'profile',
  configPrefix: 'PROFILE',
  schedule: { kind: 'cron', expression: '0 2 * * *', timezone: 'Asia/Shanghai' },
  // From SRC_DIR, not this module's URL: the compiled CLI bundles this module (demo seeding).
  processor: { module: path.join(SRC_DIR, 'families', 'profile.processor.ts') },
  defaults: { maxWorkers: 4, workerTimeoutSeconds: 600 },
  // Calibration: a scope whose journal is ahead of its cursor but has no dirty mark is re-marked
  // (also signals/sources recorded before the switch from a replaced scheduler).
  pendingWork: journalAheadProvider('ref_profile_signals', 'ref_profile_cursors', PROFILE_BINDING),
};

/** Domain API: records a profile signal and marks the key dirty in one transaction. */
export function addProfileSignal(store: Store, scopeId: string, tx?: TxHandle): Promise<number> {
  return appendJournal(store, 'ref_profile_signals', PROFILE_BINDING, scopeId, {}, tx);
}
