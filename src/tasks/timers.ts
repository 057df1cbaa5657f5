/** Node timers overflow above 2^31 - 1 ms (about 24.8 days) and would fire at once: chain them. */
const MAX_TIMER_MS = 2_147_483_647;

export function setLongTimeout(fn: () => void, ms: number): { clear(): void } {
  let timer: NodeJS.Timeout;
  let remaining = Math.max(0, ms);
  const arm = () => {
    const step = Math.min(remaining, MAX_TIMER_MS);
    remaining -= step;
    timer = setTimeout(() => (remaining > 0 ? arm() : fn()), step);
  };
  arm();
  return { clear: () => clearTimeout(timer) };
}
