// The chaos drain (chaos/drain.ts) with a clock the test drives: slow work that keeps moving is
// waited for up to the hard bound, stuck work fails after the stall bound, and a drain ends as
// soon as nothing is left.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { drain, type DrainClock, type DrainProbe } from '../../chaos/drain.ts';

function fakeClock(): DrainClock & { t: number } {
  const c = {
    t: 0,
    now: () => c.t,
    sleep: async (ms: number) => {
      c.t += ms;
    },
  };
  return c;
}

/** Work that settles one item every `everyMs` (progress grows with it), or never when everyMs is 0. */
function work(items: number, everyMs: number, clock: { t: number }, stuckFrom = Number.POSITIVE_INFINITY): DrainProbe & { ticks: number } {
  const left = () => (everyMs === 0 ? items : Math.max(0, items - Math.floor(Math.min(clock.t, stuckFrom) / everyMs)));
  const p = {
    ticks: 0,
    unsettled: async () => Array.from({ length: left() }, (_, i) => `k${i}`),
    progress: async () => items - left(),
    tick: () => {
      p.ticks += 1;
    },
  };
  return p;
}

test('slow work that keeps moving is waited for past the stall bound, up to the hard bound', async () => {
  const clock = fakeClock();
  const probe = work(10, 5_000, clock); // 50 s in all, one item every 5 s
  const r = await drain(probe, { stallMs: 30_000, maxMs: 90_000 }, clock);
  assert.equal(r.drained, true);
  assert.ok(r.ms >= 50_000 && r.ms < 51_000, `drained at ${r.ms} ms`);
  assert.ok(r.longestStallMs <= 5_000, `longest stall ${r.longestStallMs}`);
  assert.ok(probe.ticks > 0, 'dead candidates are refilled between probes');
});

test('stuck work fails at the stall bound, with what is left', async () => {
  const clock = fakeClock();
  const r = await drain(work(3, 0, clock), { stallMs: 30_000, maxMs: 90_000 }, clock);
  assert.equal(r.drained, false);
  assert.ok(r.ms >= 30_000 && r.ms < 31_000, `gave up at ${r.ms} ms`);
  assert.deepEqual(r.unsettled, ['k0', 'k1', 'k2']);
});

test('work that moves, then sticks, fails one stall bound after its last movement', async () => {
  const clock = fakeClock();
  const r = await drain(work(10, 1_000, clock, 4_000), { stallMs: 30_000, maxMs: 90_000 }, clock);
  assert.equal(r.drained, false);
  assert.ok(r.ms >= 34_000 && r.ms < 35_000, `gave up at ${r.ms} ms`);
  assert.equal(r.unsettled.length, 6);
});

test('the hard bound holds even while work keeps moving', async () => {
  const clock = fakeClock();
  const r = await drain(work(1000, 1_000, clock), { stallMs: 30_000, maxMs: 90_000 }, clock);
  assert.equal(r.drained, false);
  assert.ok(r.ms >= 90_000 && r.ms < 91_000, `gave up at ${r.ms} ms`);
});

test('nothing left: no wait at all', async () => {
  const clock = fakeClock();
  const r = await drain(work(0, 1_000, clock), { stallMs: 30_000, maxMs: 90_000 }, clock);
  assert.deepEqual([r.drained, r.ms], [true, 0]);
});
