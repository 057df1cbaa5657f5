import { MAX_TIMER_MS, systemClock, type Clock } from '../runtime/clock.ts';

/** A timeout of any length on `clock`: Node timers overflow above 2^31 - 1 ms (about 24.8 days), so longer ones are chained. */
export function setLongTimeout(fn: () => void, ms: number, clock: Clock = systemClock): { clear(): void } {
  let timer: { cancel(): void };
  let remaining = Math.max(0, ms);
  const arm = () => {
    const step = Math.min(remaining, MAX_TIMER_MS);
    remaining -= step;
    timer = clock.setTimeout(() => (remaining > 0 ? arm() : fn()), step, { ref: true });
  };
  arm();
  return { clear: () => timer.cancel() };
}

/**
 * Waits for `work` to settle, at most `ms` of real time (a ref'd timer: a stop in progress keeps
 * the process alive). A stop's bounds use it: a test's driven clock must not hold a stop open.
 */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let bound: NodeJS.Timeout | undefined;
  const settled = work.then(
    () => undefined,
    () => undefined,
  );
  await Promise.race([settled, new Promise((resolve) => (bound = setTimeout(resolve, Math.max(0, ms))))]);
  clearTimeout(bound);
}
