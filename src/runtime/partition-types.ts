/** The settings, hooks and statistics of a family partition (family-partition.ts). */
import type { Term } from '../store/types.ts';
import type { ReadHandle } from '../store/read-handle.ts';

export interface PartitionSettings {
  readyQueueSize: number;
  scanPageSize: number;
  retryBaseMs: number;
  retryMaxMs: number;
  conflictRetryMs: number;
  discoveryTimeoutMs: number;
}

export interface PartitionHooks {
  wake(): void;
  termLost(term: Term): void;
  currentTerm(): Term | null;
  /**
   * The term to dispatch under, or null while dispatch must not start (no term, a failed renewal
   * suspended it (RFC 8), shutdown). Default: currentTerm.
   */
  dispatchTerm?(): Term | null;
  /** The pending-work provider's reads: a handle the database refuses writes on (RFC 1, 6). */
  providerRead: ReadHandle;
}

export interface FamilyStats {
  family: string;
  bindingName: string;
  schedule: string;
  budget: number;
  running: number;
  ready: number;
  retryWait: number;
  scanInProgress: boolean;
  nextDueAt: string | null;
  health: 'ok' | 'degraded';
  lastError: string | null;
  invocations: number;
  failures: Record<string, number>;
  timeouts: number;
  /** Live worker processes of the family: running, idle (warm) and terminating. */
  workerProcesses: number;
  /** Worker processes started since the host started (cold starts). */
  workerSpawns: number;
}
