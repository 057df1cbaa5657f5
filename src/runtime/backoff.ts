/**
 * In-memory backoff per key (RFC 7): consecutive failures and next retry time. Exponential with a
 * small jitter: base, 2x base, 4x base ... capped; unlimited attempts; success clears it; new input
 * and explicit triggers do not reset it. A CAS/progress conflict uses a fixed short delay and does
 * not count as a failure. Nothing here is persisted: a restart may retry at once.
 */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
  conflictMs: number;
  /** Relative jitter, e.g. 0.1 for +-10 %. */
  jitter: number;
  random?: () => number;
}

export interface BackoffEntry {
  consecutiveFailures: number;
  nextRetryAt: number;
  lastReason: string;
  /** The last failure's message (the console shows why a key backs off). */
  lastMessage?: string;
}

export function failureDelayMs(policy: BackoffPolicy, consecutiveFailures: number): number {
  const exponent = Math.max(0, consecutiveFailures - 1);
  const raw = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(exponent, 40));
  const random = policy.random ?? Math.random;
  const factor = 1 + policy.jitter * (2 * random() - 1);
  return Math.max(1, Math.min(policy.maxMs * (1 + policy.jitter), Math.round(raw * factor)));
}

export class BackoffIndex {
  private readonly entries = new Map<string, BackoffEntry>();
  constructor(private readonly policy: BackoffPolicy) {}

  /** Records a real failure; returns the entry with its next retry time. */
  fail(key: string, reason: string, now: number, message?: string): BackoffEntry {
    const previous = this.entries.get(key)?.consecutiveFailures ?? 0;
    const consecutiveFailures = previous + 1;
    const entry: BackoffEntry = { consecutiveFailures, nextRetryAt: now + failureDelayMs(this.policy, consecutiveFailures), lastReason: reason };
    if (message !== undefined) entry.lastMessage = message;
    this.entries.set(key, entry);
    return entry;
  }

  /** A progress/head CAS conflict: fixed short delay, failure count unchanged. */
  conflict(key: string, reason: string, now: number): BackoffEntry {
    const previous = this.entries.get(key);
    const entry = { consecutiveFailures: previous?.consecutiveFailures ?? 0, nextRetryAt: now + this.policy.conflictMs, lastReason: reason };
    this.entries.set(key, entry);
    return entry;
  }

  succeed(key: string): void {
    this.entries.delete(key);
  }

  get(key: string): BackoffEntry | undefined {
    return this.entries.get(key);
  }

  /**
   * Keys whose retry time has come, earliest first. `waiting` restricts the answer to keys that
   * still wait for their retry (an entry stays until success, also while its retry runs).
   */
  due(now: number, waiting?: (key: string) => boolean): string[] {
    return [...this.entries]
      .filter(([k, e]) => e.nextRetryAt <= now && (!waiting || waiting(k)))
      .sort((a, b) => a[1].nextRetryAt - b[1].nextRetryAt)
      .map(([k]) => k);
  }

  /**
   * The earliest retry time, or null. Pass `waiting` to ignore keys whose retry was already
   * dispatched: their past deadline would otherwise look due forever and wake a loop at once.
   */
  nextDeadline(waiting?: (key: string) => boolean): number | null {
    let min: number | null = null;
    for (const [k, e] of this.entries) {
      if (waiting && !waiting(k)) continue;
      if (min === null || e.nextRetryAt < min) min = e.nextRetryAt;
    }
    return min;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Every key that backs off, earliest retry first, at most `limit` (the console's read). */
  list(limit: number): Array<{ key: string } & BackoffEntry> {
    return [...this.entries]
      .sort((a, b) => a[1].nextRetryAt - b[1].nextRetryAt)
      .slice(0, limit)
      .map(([key, e]) => ({ key, ...e }));
  }

  clear(): void {
    this.entries.clear();
  }
}
