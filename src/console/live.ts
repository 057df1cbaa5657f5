/**
 * What only the host process knows (the console mounted in `apsup run`): the supervisors' term
 * keepers, each family's budget in use, ready and retry-wait counts and health, the in-memory
 * backoff (RFC 7: never persisted) and the latest invocations with outcome and duration. The
 * stand-alone `apsup console` has none of it and says so.
 */
import type { InvocationRecord } from '../runtime/invocation.ts';
import type { Runtime } from '../runtime/runtime.ts';
import type { RuntimeStatus } from '../runtime/runtime-status.ts';

export interface BackoffView {
  scopeId: string;
  consecutiveFailures: number;
  nextRetryAt: string;
  reason: string;
  message: string | null;
}

export interface InvocationView {
  scopeId: string;
  at: string;
  status: string;
  durationMs: number;
  requestGeneration: number;
  workerId: string;
  error: string | null;
}

export interface LiveSource {
  status(): RuntimeStatus;
  backoff(family: string, limit: number): BackoffView[];
  invocations(family: string, scopeId?: string): InvocationView[];
  latencyMs(): number | null;
  close(): void;
}

export class LiveRuntime implements LiveSource {
  private readonly recent = new Map<string, InvocationRecord[]>();
  private readonly removals: Array<() => void> = [];
  private latency: number[] = [];

  constructor(
    private readonly runtime: Runtime,
    private readonly perFamily = 50,
  ) {
    for (const p of this.partitions()) this.removals.push(p.observeInvocations((r) => this.record(r)));
  }

  private partitions() {
    return this.runtime.supervisors.flatMap((s) => s.partitions);
  }

  private record(r: InvocationRecord): void {
    const list = this.recent.get(r.family) ?? [];
    list.unshift(r);
    if (list.length > this.perFamily) list.length = this.perFamily;
    this.recent.set(r.family, list);
    this.latency.push(r.durationMs);
  }

  status(): RuntimeStatus {
    return this.runtime.status();
  }

  backoff(family: string, limit: number): BackoffView[] {
    const p = this.partitions().find((x) => x.family === family);
    if (!p) return [];
    return p.backoff.list(limit).map((e) => ({
      scopeId: e.key,
      consecutiveFailures: e.consecutiveFailures,
      nextRetryAt: new Date(e.nextRetryAt).toISOString(),
      reason: e.lastReason,
      message: e.lastMessage ?? null,
    }));
  }

  invocations(family: string, scopeId?: string): InvocationView[] {
    return (this.recent.get(family) ?? [])
      .filter((r) => scopeId === undefined || r.scopeId === scopeId)
      .map((r) => ({
        scopeId: r.scopeId,
        at: new Date(r.at).toISOString(),
        status: r.status,
        durationMs: Math.round(r.durationMs),
        requestGeneration: r.requestGeneration,
        workerId: r.workerId,
        error: r.error,
      }));
  }

  /** Mean duration of the invocations since the last call (one sparkline point), or null. */
  latencyMs(): number | null {
    const values = this.latency;
    this.latency = [];
    return values.length === 0 ? null : Math.round(values.reduce((a, b) => a + b, 0) / values.length);
  }

  close(): void {
    for (const remove of this.removals.splice(0)) remove();
  }
}
