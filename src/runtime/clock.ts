/**
 * The host's local time, in one injectable place: wall time (`now`, for local due times and log
 * figures), monotonic time (`monotonic`, for deadlines and durations) and timers. The database
 * clock stays the only authority for leases and schedules (RFC 8): this clock only decides when
 * the host looks again, never whether a lease or a fire is valid. Tests pass a ManualClock
 * (manual-clock.ts) and advance it instead of sleeping.
 */

export interface ClockTimer {
  /** Cancels the timer (idempotent; a fired timer stays fired). */
  cancel(): void;
}

export interface Clock {
  /** Wall time in ms since the epoch (Date.now). */
  now(): number;
  /** Monotonic time in ms from an arbitrary origin (performance.now). */
  monotonic(): number;
  /**
   * Calls `fn` once after `ms`. `ref`: whether a pending timer keeps the process alive (default
   * false: the host's timers never hold a process open on their own).
   */
  setTimeout(fn: () => void, ms: number, options?: { ref?: boolean }): ClockTimer;
  /** Calls `fn` every `ms` until cancelled; never keeps the process alive. */
  setInterval(fn: () => void, ms: number): ClockTimer;
}

/** Largest delay Node's timers accept; longer ones are clamped (they would fire at once). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

const clampDelay = (ms: number): number => Math.min(MAX_TIMER_MS, Math.max(0, Number.isFinite(ms) ? ms : MAX_TIMER_MS));

/** The real clock of the process. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimeout(fn, ms, options) {
    const handle = setTimeout(fn, clampDelay(ms));
    if (!options?.ref) handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
  setInterval(fn, ms) {
    const handle = setInterval(fn, clampDelay(ms));
    handle.unref();
    return { cancel: () => clearInterval(handle) };
  },
};

/** Resolves after `ms` on `clock` (a timer that never keeps the process alive). */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => {
    clock.setTimeout(resolve, ms);
  });
}

/** Settles like `work`, or rejects with `onTimeout()` once `ms` passed on `clock` (the work goes on unobserved). */
export function within<T>(clock: Clock, work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  work.catch(() => undefined);
  let timer: ClockTimer | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => reject(onTimeout()), Math.max(0, ms));
  });
  return Promise.race([work, deadline]).finally(() => timer?.cancel());
}
