/**
 * A clock that moves only when told (tests): `advance(ms)` runs every timer that falls due, in
 * due order, letting promise callbacks of each run settle before the next. Wall and monotonic
 * time move together; wall time starts at the real time so local due times computed from a
 * database timestamp stay sensible.
 */
import type { Clock, ClockTimer } from './clock.ts';

interface Pending {
  id: number;
  at: number;
  fn: () => void;
  every: number | null;
}

/** Lets the promise jobs queued by a timer callback (and the I/O-free ones they queue) run. */
async function drainMicrotasks(): Promise<void> {
  for (let i = 0; i < 20; i += 1) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}

export class ManualClock implements Clock {
  private mono = 0;
  private readonly wallOrigin: number;
  private seq = 0;
  private readonly timers = new Map<number, Pending>();

  constructor(options: { wall?: number } = {}) {
    this.wallOrigin = options.wall ?? Date.now();
  }

  now(): number {
    return this.wallOrigin + this.mono;
  }

  monotonic(): number {
    return this.mono;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    return this.add(fn, ms, null);
  }

  setInterval(fn: () => void, ms: number): ClockTimer {
    return this.add(fn, ms, Math.max(1, ms));
  }

  /** Timers not yet fired or cancelled. */
  get pending(): number {
    return this.timers.size;
  }

  /** The monotonic time of the earliest pending timer, or null. */
  nextAt(): number | null {
    let min: number | null = null;
    for (const t of this.timers.values()) if (min === null || t.at < min) min = t.at;
    return min;
  }

  /** Moves time forward by `ms`, running each timer that falls due at its own time. */
  async advance(ms: number): Promise<void> {
    const target = this.mono + Math.max(0, ms);
    for (;;) {
      const next = this.earliest();
      if (!next || next.at > target) break;
      this.mono = Math.max(this.mono, next.at);
      if (next.every === null) this.timers.delete(next.id);
      else next.at += next.every;
      next.fn();
      await drainMicrotasks();
    }
    this.mono = target;
    await drainMicrotasks();
  }

  private earliest(): Pending | undefined {
    let best: Pending | undefined;
    for (const t of this.timers.values()) if (!best || t.at < best.at || (t.at === best.at && t.id < best.id)) best = t;
    return best;
  }

  private add(fn: () => void, ms: number, every: number | null): ClockTimer {
    const id = ++this.seq;
    this.timers.set(id, { id, at: this.mono + Math.max(0, Number.isFinite(ms) ? ms : Number.MAX_SAFE_INTEGER), fn, every });
    return {
      cancel: () => {
        this.timers.delete(id);
      },
    };
  }
}
