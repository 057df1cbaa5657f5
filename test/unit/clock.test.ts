// The injectable clock: the system clock's timers fire and cancel; the manual clock runs timers
// only when advanced, in due order, intervals repeatedly, and `within` rejects on its time.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sleep, systemClock, within } from '../../src/runtime/clock.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';

describe('systemClock', () => {
  test('a timer fires; a cancelled one does not', async () => {
    const fired: string[] = [];
    systemClock.setTimeout(() => fired.push('a'), 1);
    systemClock.setTimeout(() => fired.push('b'), 1).cancel();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(fired, ['a']);
    assert.ok(Math.abs(systemClock.now() - Date.now()) < 50);
  });
});

describe('ManualClock', () => {
  test('nothing fires until advanced; timers fire in due order at their own time', async () => {
    const clock = new ManualClock({ wall: 1_000_000 });
    const seen: Array<[string, number]> = [];
    clock.setTimeout(() => seen.push(['late', clock.monotonic()]), 300);
    clock.setTimeout(() => seen.push(['early', clock.monotonic()]), 100);
    const cancelled = clock.setTimeout(() => seen.push(['cancelled', clock.monotonic()]), 200);
    cancelled.cancel();
    assert.deepEqual(seen, []);
    await clock.advance(250);
    assert.deepEqual(seen, [['early', 100]]);
    assert.equal(clock.now(), 1_000_250);
    await clock.advance(50);
    assert.deepEqual(seen, [
      ['early', 100],
      ['late', 300],
    ]);
    assert.equal(clock.pending, 0);
  });

  test('an interval repeats until cancelled; a timer armed by a timer fires within the same advance', async () => {
    const clock = new ManualClock();
    let ticks = 0;
    const interval = clock.setInterval(() => {
      ticks += 1;
    }, 10);
    let chained = -1;
    clock.setTimeout(() => {
      clock.setTimeout(() => {
        chained = clock.monotonic();
      }, 5);
    }, 20);
    await clock.advance(35);
    assert.equal(ticks, 3);
    assert.equal(chained, 25);
    interval.cancel();
    await clock.advance(100);
    assert.equal(ticks, 3);
  });

  test('sleep and within follow the manual time, not the wall', async () => {
    const clock = new ManualClock();
    let woke = false;
    void sleep(clock, 1_000).then(() => {
      woke = true;
    });
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(woke, false);
    await clock.advance(1_000);
    assert.equal(woke, true);

    const hung = within(clock, new Promise<never>(() => undefined), 500, () => new Error('bound passed'));
    await clock.advance(499);
    let rejected: Error | null = null;
    hung.catch((e: Error) => {
      rejected = e;
    });
    await clock.advance(1);
    assert.equal((rejected as Error | null)?.message, 'bound passed');
    assert.equal(await within(clock, Promise.resolve(7), 500, () => new Error('x')), 7);
    assert.equal(clock.pending, 0, 'the bound is cancelled once the work settled');
  });
});
