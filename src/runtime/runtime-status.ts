/**
 * The host's status (Runtime.status(): `apsup status`, /metrics, the bench): its mode and role,
 * each supervisor's term and renewal health, and each family's counters.
 */
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { FamilyStats } from './family-partition.ts';
import type { Supervisor } from './supervisor.ts';
import { fencingSummary, type SessionAccounts } from '../store/session-accounts.ts';

export interface RuntimeStatus {
  mode: string;
  role: string;
  holderId: string;
  /** What enforces the fencing of processors' sessions (session-accounts.ts fencingSummary). */
  fencing: { setup: string; summary: string };
  supervisors: Array<{
    supervisorKey: string;
    state: string;
    supervisorGeneration: number | null;
    renewalFailures: number;
    renewalFailuresTotal: number;
    termChanges: number;
    dispatchSuspended: boolean;
  }>;
  families: FamilyStats[];
}

export function runtimeStatus(
  config: Pick<RuntimeConfig, 'mode' | 'role'>,
  holderId: string,
  supervisors: readonly Supervisor[],
  accounts: SessionAccounts,
): RuntimeStatus {
  return {
    mode: config.mode,
    role: config.role,
    holderId,
    fencing: { setup: accounts.setup, summary: fencingSummary(accounts) },
    supervisors: supervisors.map((s) => ({
      supervisorKey: s.supervisorKey,
      state: s.keeper.state,
      supervisorGeneration: s.term?.supervisorGeneration ?? null,
      renewalFailures: s.keeper.renewalFailures,
      renewalFailuresTotal: s.keeper.renewalFailuresTotal,
      termChanges: s.keeper.termChanges,
      dispatchSuspended: s.keeper.suspended,
    })),
    families: supervisors.flatMap((s) => s.partitions.map((p) => p.stats())),
  };
}
