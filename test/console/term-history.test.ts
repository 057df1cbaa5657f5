// term-history.ts: what a change of holder or generation between two reads is called.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TermHistory, classify } from '../../src/console/term-history.ts';

const lease = (holderId: string | null, supervisorGeneration: number) => ({ supervisorKey: 'global', holderId, supervisorGeneration, live: holderId !== null });

test('classify: renewal, takeover, re-election, invalidation, acquisition', () => {
  assert.equal(classify(lease('a', 3), lease('a', 3)), null);
  assert.equal(classify(lease('a', 3), lease('b', 4)), 'takeover');
  assert.equal(classify(lease('a', 3), lease('a', 5)), 'reelected');
  assert.equal(classify(lease('a', 3), lease(null, 4)), 'invalidated');
  assert.equal(classify(lease(null, 4), lease('b', 5)), 'acquired');
});

test('history: first sighting, then changes only, newest first, bounded', () => {
  const h = new TermHistory(3);
  h.observe([lease(null, 0)], 't0');
  assert.deepEqual(h.list(), [], 'a key never taken is not news');
  h.observe([lease('a', 1)], 't1');
  h.observe([lease('a', 1)], 't2');
  h.observe([lease('b', 2)], 't3');
  assert.deepEqual(
    h.list().map((c) => [c.kind, c.fromHolderId, c.toHolderId, c.observedAt]),
    [
      ['takeover', 'a', 'b', 't3'],
      ['acquired', null, 'a', 't1'],
    ],
  );
  h.observe([lease(null, 3)], 't4');
  h.observe([lease('c', 4)], 't5');
  assert.deepEqual(
    h.list().map((c) => c.observedAt),
    ['t5', 't4', 't3'],
  );
});
