/**
 * The family and scope pages' data (RFC 3, 4, 7): the binding's scan checkpoint
 * (pc_aps_read_binding_state), its backlog counts (pc_aps_read_family_backlog), keyset pages of
 * its owed and its dirty keys with their generations (pc_aps_list_owed_requests,
 * pc_aps_list_dirty_keys, by pending sequence), one
 * scope's intent (pc_aps_read_intent), and, mounted in `apsup run`, the in-memory backoff and the
 * latest invocations.
 */
import { nextDueOf } from '../cli/status.ts';
import { BACKLOG_COUNT_CAP, type BaseStore } from '../store/base-store.ts';
import type { IntentSnapshot, KeyGenerations } from '../store/types.ts';
import type { BackoffView, InvocationView } from './live.ts';
import { type ConsoleSource, policyText } from './source.ts';

export const OWED_PAGE_MAX = 500;
const BACKOFF_SHOWN = 200;

export class NotFound extends Error {}

export interface KeyView extends KeyGenerations {
  lastAutoScanGeneration?: number;
  /** requested > handled: an accepted invocation is owed (RFC 3). */
  owed: boolean;
  /** dirty > clean: ordinary work may remain. */
  dirty: boolean;
}

function keyView(k: KeyGenerations | IntentSnapshot): KeyView {
  return {
    scopeId: k.scopeId,
    pendingSequence: k.pendingSequence,
    requestedGeneration: k.requestedGeneration,
    handledGeneration: k.handledGeneration,
    dirtyGeneration: k.dirtyGeneration,
    cleanGeneration: k.cleanGeneration,
    ...('lastAutoScanGeneration' in k ? { lastAutoScanGeneration: k.lastAutoScanGeneration } : {}),
    owed: k.requestedGeneration > k.handledGeneration,
    dirty: k.dirtyGeneration > k.cleanGeneration,
  };
}

function requireFamily(source: ConsoleSource, family: string) {
  const f = source.family(family);
  if (!f) throw new NotFound(`unknown family ${JSON.stringify(family)}`);
  return f;
}

export async function familyDetail(source: ConsoleSource, family: string, page: { after: number; dirtyAfter: number; limit: number }) {
  const f = requireFamily(source, family);
  const binding = f.registration.bindingName;
  const state = await source.store.readBindingState(binding);
  const backlog = await source.store.readFamilyBacklog(binding, BACKLOG_COUNT_CAP);
  const owed = await source.store.listOwedRequests(binding, page.after, page.limit);
  const dirty = await (source.store as BaseStore).listDirtyKeys(binding, page.dirtyAfter, page.limit);
  const backoff: BackoffView[] = source.live?.backoff(family, BACKOFF_SHOWN) ?? [];
  const backoffIntents =
    backoff.length > 0
      ? await source.store.readIntents(
          binding,
          backoff.map((b) => b.scopeId),
        )
      : [];
  const stats = source.live?.status().families.find((x) => x.family === family) ?? null;
  return {
    family,
    binding,
    configPrefix: f.registration.configPrefix,
    schedule: policyText(f.schedule),
    policy: f.schedule,
    maxWorkers: f.maxWorkers,
    workerTimeoutSeconds: f.workerTimeoutMs / 1000,
    dbNow: state.dbNow.toISOString(),
    scan: {
      lastScheduleCheckpointAt: state.lastScheduleCheckpointAt?.toISOString() ?? null,
      nextDueAt: nextDueOf(f.schedule, state)?.toISOString() ?? null,
      scanGeneration: state.scanGeneration,
      scanInProgress: state.scanInProgress,
      scanUpperPendingSequence: state.scanUpperPendingSequence,
      scanStartedAt: state.scanStartedAt?.toISOString() ?? null,
      scanFinishedAt: state.scanFinishedAt?.toISOString() ?? null,
    },
    backlog: { owed: backlog.owedCount, ordinary: backlog.backlogCount, countCap: backlog.countCap },
    owed: { keys: owed.keys.map(keyView), nextAfterSequence: owed.exhausted ? null : owed.nextAfterSequence },
    dirty: { keys: dirty.keys.map(keyView), nextAfterSequence: dirty.exhausted ? null : dirty.nextAfterSequence },
    live: source.live !== null,
    stats,
    backoff: backoff.map((b, i) => ({ ...b, intent: backoffIntents[i] ? keyView(backoffIntents[i]!) : null })),
    invocations: source.live?.invocations(family) ?? [],
  };
}

export async function scopeDetail(source: ConsoleSource, family: string, scopeId: string) {
  const f = requireFamily(source, family);
  const intent = await source.store.readIntent(f.registration.bindingName, scopeId);
  const backoff = source.live?.backoff(family, Number.MAX_SAFE_INTEGER).find((b) => b.scopeId === scopeId) ?? null;
  const invocations: InvocationView[] = source.live?.invocations(family, scopeId) ?? [];
  return {
    family,
    binding: f.registration.bindingName,
    scopeId,
    registered: intent !== null,
    intent: intent ? keyView(intent) : null,
    live: source.live !== null,
    backoff,
    invocations,
  };
}
