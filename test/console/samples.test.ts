// samples.ts: spacing, bound and counter deltas of the sparkline series.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SampleRing } from '../../src/console/samples.ts';

test('samples are spaced, bounded, and counters read as deltas', () => {
  const r = new SampleRing(3, 1000);
  assert.equal(r.add({ at: 0, owed: 5, invocations: 10 }), true);
  assert.equal(r.add({ at: 500, owed: 9, invocations: 11 }), false, 'too soon');
  r.add({ at: 1000, owed: 6, invocations: 14 });
  r.add({ at: 2000, owed: 7, invocations: null });
  r.add({ at: 3000, owed: 8, invocations: 20 });
  const s = r.series(['invocations']);
  assert.deepEqual(s.at, [1000, 2000, 3000]);
  assert.deepEqual(s.owed, [6, 7, 8]);
  assert.deepEqual(s.invocations, [null, null]);
});
