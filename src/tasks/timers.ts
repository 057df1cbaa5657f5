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
