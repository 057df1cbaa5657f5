/**
 * The drain after a trial's fault window: wait until every key is settled and every task is
 * terminal. A drain fails (liveness) when work is left and nothing moved for `stallMs`, or at the
 * hard bound `maxMs`. "Moved": the set of unsettled items changed, or the progress count
 * (invocations started or ended, task history rows) grew. On a loaded 2-core machine a cold worker
 * start alone can take 20 s, so a fixed bound mistakes slow work for stuck work; stuck work shows
 * as a stall, and a stall is what this reports.
 */

export interface DrainProbe {
  /** What is not settled yet (empty: drained). */
  unsettled(): Promise<string[]>;
  /** A count that grows while work moves (journal events, task history rows). */
  progress(): Promise<number>;
  /** Called between probes (restart dead candidates). */
  tick(): void;
}

export interface DrainOutcome {
  drained: boolean;
  ms: number;
  unsettled: string[];
  /** The longest time without any movement while work was left. */
  longestStallMs: number;
}

export interface DrainClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: DrainClock = { now: () => Date.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };

export async function drain(
  probe: DrainProbe,
  bounds: { stallMs: number; maxMs: number; everyMs?: number },
  clock: DrainClock = realClock,
): Promise<DrainOutcome> {
  const start = clock.now();
  let unsettled = await probe.unsettled();
  let progress = await probe.progress();
  let movedAt = start;
  let longestStallMs = 0;
  while (unsettled.length > 0) {
    const now = clock.now();
    longestStallMs = Math.max(longestStallMs, now - movedAt);
    if (now - movedAt >= bounds.stallMs || now - start >= bounds.maxMs) break;
    probe.tick();
    await clock.sleep(bounds.everyMs ?? 200);
    const before = unsettled;
    unsettled = await probe.unsettled().catch(() => before);
    const p = await probe.progress().catch(() => progress);
    if (p > progress || unsettled.join() !== before.join()) movedAt = clock.now();
    progress = Math.max(progress, p);
  }
  return { drained: unsettled.length === 0, ms: clock.now() - start, unsettled, longestStallMs };
}
