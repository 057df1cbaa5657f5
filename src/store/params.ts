/**
 * The validated parameters of the catalogue's operations (operations.ts names them): each check
 * runs before any SQL and names the operation and the value it refused.
 */
import { InvalidArgumentError } from './errors.ts';
import { assertBindingName, assertGeneration, assertHolderId, assertScopeId, assertSupervisorKey } from './identifiers.ts';
import { toDbTime } from './rows.ts';
import type { AckRequest, RuntimeMode, SchedulePolicy, Term } from './types.ts';

export type Params = Record<string, string | number | null>;

export function assertTtl(operation: string, ttlMs: number): void {
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1000 || ttlMs > 3_600_000) {
    throw new InvalidArgumentError(operation, `ttl must be an integer number of milliseconds in 1000..3600000, got ${String(ttlMs)}`);
  }
}

export function assertMode(operation: string, mode: unknown): asserts mode is RuntimeMode {
  if (mode !== 'global' && mode !== 'dedicated') {
    throw new InvalidArgumentError(operation, `mode must be global or dedicated, got ${JSON.stringify(mode)}`);
  }
}

export function termParams(operation: string, term: Term): Params {
  assertSupervisorKey(operation, term.supervisorKey);
  assertHolderId(operation, term.holderId);
  assertGeneration(operation, 'supervisor generation', term.supervisorGeneration, 1);
  return {
    supervisor_key: term.supervisorKey,
    holder_id: term.holderId,
    supervisor_generation: term.supervisorGeneration,
  };
}

export function keyParams(operation: string, bindingName: string, scopeId: string): Params {
  assertBindingName(operation, bindingName);
  assertScopeId(operation, scopeId);
  return { binding_name: bindingName, scope_id: scopeId };
}

export function ackParams(operation: string, term: Term, ack: AckRequest): Params {
  assertGeneration(operation, 'claimed request generation', ack.claimedRequestGeneration, 1);
  const clean = ack.cleanThroughDirtyGeneration ?? null;
  if (clean !== null) assertGeneration(operation, 'clean-through dirty generation', clean, 0);
  return {
    ...termParams(operation, term),
    ...keyParams(operation, ack.bindingName, ack.scopeId),
    claimed_request_generation: ack.claimedRequestGeneration,
    clean_through_dirty_generation: clean,
  };
}

/** pc_aps_begin_scan's policy, interval and cron fire time. */
export function schedulePolicyParams(operation: string, policy: SchedulePolicy): Params {
  let intervalSeconds: number | null = null;
  let cronFireAt: string | null = null;
  if (policy.kind === 'interval') {
    if (!Number.isSafeInteger(policy.intervalSeconds) || policy.intervalSeconds <= 0) {
      throw new InvalidArgumentError(operation, `interval seconds must be a positive integer, got ${String(policy.intervalSeconds)}`);
    }
    intervalSeconds = policy.intervalSeconds;
  } else if (policy.kind === 'cron') {
    if (!(policy.fireAt instanceof Date) || Number.isNaN(policy.fireAt.getTime())) {
      throw new InvalidArgumentError(operation, 'cron fire time must be a valid Date');
    }
    cronFireAt = toDbTime(policy.fireAt);
  } else if (policy.kind !== 'off') {
    throw new InvalidArgumentError(operation, `unknown schedule policy ${JSON.stringify((policy as { kind: unknown }).kind)}`);
  }
  return { policy: policy.kind, interval_seconds: intervalSeconds, cron_fire_at: cronFireAt };
}
