/**
 * Cumulative numbers of one task runner for /metrics (src/observability/task-metrics.ts): claims
 * per task type, ended attempts per type and outcome, failures per type and reason (error code),
 * attempt durations, and when the reconciler last swept successfully. Labels stay bounded: at
 * most MAX_REASONS distinct reasons, then 'other'.
 */
const MAX_REASONS = 32;

export type AttemptOutcome = 'succeeded' | 'failed' | 'cancelled' | 'requeued';

export class RunnerStats {
  readonly claims = new Map<string, number>();
  /** `${taskType}\t${outcome}` -> count. */
  readonly outcomes = new Map<string, number>();
  /** `${taskType}\t${reason}` -> count. */
  readonly failures = new Map<string, number>();
  private readonly reasons = new Set<string>();
  sweeps = 0;
  sweepFailures = 0;
  /** The runner clock's now() at the last sweep whose reconciliation read succeeded (null: none yet). */
  lastSweepOkAt: number | null = null;
  /** Called for every ended attempt (durations go to a histogram). */
  onAttemptEnded: ((taskType: string, outcome: AttemptOutcome, durationMs: number) => void) | null = null;

  claimed(taskType: string): void {
    this.claims.set(taskType, (this.claims.get(taskType) ?? 0) + 1);
  }

  /** An attempt ended with a database outcome (or a worker's own status) and its code. */
  endedAs(taskType: string, outcome: string, code: string | null, durationMs: number): void {
    const o: AttemptOutcome = outcome === 'requeued' || outcome === 'cancelled' || outcome === 'succeeded' ? outcome : 'failed';
    const reason = outcome === 'exhausted' ? 'retries_exhausted' : outcome === 'gave_up' ? 'failure_hook_failed' : o === 'cancelled' ? 'cancelled' : code;
    this.ended(taskType, o, reason, durationMs);
  }

  ended(taskType: string, outcome: AttemptOutcome, reason: string | null, durationMs: number): void {
    const k = `${taskType}\t${outcome}`;
    this.outcomes.set(k, (this.outcomes.get(k) ?? 0) + 1);
    if (outcome !== 'succeeded' && outcome !== 'requeued') {
      let r = reason ?? outcome;
      if (!this.reasons.has(r)) {
        if (this.reasons.size >= MAX_REASONS) r = 'other';
        else this.reasons.add(r);
      }
      const f = `${taskType}\t${r}`;
      this.failures.set(f, (this.failures.get(f) ?? 0) + 1);
    }
    this.onAttemptEnded?.(taskType, outcome, durationMs);
  }
}
