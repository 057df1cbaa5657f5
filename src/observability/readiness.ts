/**
 * The readiness document (GET /readyz). It keeps the overall `artifact_processing_supervisor`
 * status and adds one status per family (RFC 12):
 *
 * - `leader`: this host holds the family's term and its examinations are healthy;
 * - `degraded`: this host holds the term (the lease is valid) but the family's pending-work
 *   provider or last examination failed; the other families keep being scheduled, so the
 *   overall status is `partially_degraded`, not a failure;
 * - `standby`: another candidate holds the family's term; this host is a healthy standby;
 * - `ok`: role api — this host only accepts intents for the family.
 *
 * Overall: `ok` (leading, or role api), `partially_degraded`, `standby` (every key held by
 * another candidate: healthy, ready), `unavailable` (a supervisor is still starting or stopped;
 * HTTP 503). The api role adds the backlog (owed requests per family, bounded) and whether a
 * background leader is alive, from persisted facts: accepting an intent does not prove that
 * anything processes it. Durable task worker readiness is the number of live task workers
 * (a worker publishes its fact only while its reconciler sweeps), plus the embedded runner's
 * reconciler health.
 */
import type { Runtime } from '../runtime/runtime.ts';
import type { TaskRunner } from '../tasks/task-runner.ts';
import type { NotifyStatus } from '../notify/channel.ts';
import type { LeaderFact, OwedCount, PersistedFacts } from './facts.ts';

export type FamilyStatus = 'ok' | 'degraded' | 'standby' | 'leader' | 'unavailable';
export type OverallStatus = 'ok' | 'partially_degraded' | 'standby' | 'unavailable';

export interface ReadinessDocument {
  ready: boolean;
  artifact_processing_supervisor: {
    status: OverallStatus;
    mode: string;
    role: string;
    /** What enforces the fencing of processors' sessions: 'engine', 'grants' or 'filtered' (a warning). */
    fencing: { setup: string; summary: string };
    supervisors: Array<{ supervisorKey: string; state: string }>;
    families: Record<string, { status: FamilyStatus; lastError?: string | null }>;
  };
  backlog?: {
    families: Record<string, OwedCount>;
    backgroundLeaderAlive: boolean;
    leases: LeaderFact[];
    error?: string;
  };
  /** The optional wake-up channel (issue 12 item 6): `down` only costs latency (polling continues), so it never makes the host unready. */
  notify?: NotifyStatus;
  durable_tasks: {
    liveWorkers: number | null;
    /** The runner embedded in this host: whether its reconciler is sweeping (it publishes readiness only then). */
    reconciler?: { healthy: boolean; lastSweepAgoMs: number | null; sweeps: number; sweepFailures: number };
    error?: string;
  };
}

export async function buildReadiness(runtime: Runtime, facts: PersistedFacts, taskRunner: TaskRunner | null = null): Promise<ReadinessDocument> {
  const status = runtime.status();
  const families: ReadinessDocument['artifact_processing_supervisor']['families'] = {};
  let overall: OverallStatus;
  if (status.role === 'api') {
    for (const f of runtime.config.families) families[f.registration.family] = { status: 'ok' };
    overall = 'ok';
  } else {
    const supervisorOf = new Map<string, string>();
    for (const s of runtime.supervisors) for (const p of s.partitions) supervisorOf.set(p.family, s.keeper.state);
    let degraded = false;
    for (const f of status.families) {
      const state = supervisorOf.get(f.family);
      let fs: FamilyStatus;
      if (state === 'leader') fs = f.health === 'degraded' ? 'degraded' : 'leader';
      else if (state === 'standby') fs = 'standby';
      else fs = 'unavailable';
      if (fs === 'degraded') degraded = true;
      families[f.family] = fs === 'degraded' ? { status: fs, lastError: f.lastError } : { status: fs };
    }
    const states = status.supervisors.map((s) => s.state);
    if (states.length === 0 || states.some((s) => s !== 'leader' && s !== 'standby')) overall = 'unavailable';
    else if (degraded) overall = 'partially_degraded';
    else if (states.every((s) => s === 'standby')) overall = 'standby';
    else overall = 'ok';
  }
  const doc: ReadinessDocument = {
    ready: overall !== 'unavailable',
    artifact_processing_supervisor: {
      status: overall,
      mode: status.mode,
      role: status.role,
      fencing: status.fencing,
      supervisors: status.supervisors.map((s) => ({ supervisorKey: s.supervisorKey, state: s.state })),
      families,
    },
    durable_tasks: { liveWorkers: null },
  };
  if (status.role === 'api') {
    try {
      const [owed, leases] = await Promise.all([facts.owed(), facts.leaders()]);
      doc.backlog = { families: Object.fromEntries(owed), backgroundLeaderAlive: leases.some((l) => l.live), leases };
    } catch (error) {
      doc.backlog = { families: {}, backgroundLeaderAlive: false, leases: [], error: (error as Error).message };
    }
  }
  if (runtime.notify) doc.notify = runtime.notify.status();
  if (taskRunner) {
    const { lastSweepOkAt, sweeps, sweepFailures } = taskRunner.stats;
    doc.durable_tasks.reconciler = {
      healthy: taskRunner.reconcilerHealthy(),
      lastSweepAgoMs: lastSweepOkAt === null ? null : taskRunner.clock.now() - lastSweepOkAt,
      sweeps,
      sweepFailures,
    };
  }
  try {
    doc.durable_tasks.liveWorkers = await facts.liveTaskWorkers();
  } catch (error) {
    doc.durable_tasks.error = (error as Error).message;
  }
  return doc;
}
