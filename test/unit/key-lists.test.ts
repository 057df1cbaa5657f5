// The list forms' parameters and results (src/store/key-lists.ts, params.ts): refused before any
// SQL, and decoded in input order with an empty item for a key never registered.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../src/store/errors.ts';
import { ackBatchParams, readIntentsParams, toAckBatch, toIntentList } from '../../src/store/key-lists.ts';
import { schedulePolicyParams } from '../../src/store/params.ts';

const term = { supervisorKey: 'global', holderId: 'h1', supervisorGeneration: 3 };

test('a read list: 1..1000 valid scope ids of one binding, joined by commas', () => {
  assert.deepEqual(readIntentsParams('op', 'b.x', ['a', 'b']), { binding_name: 'b.x', scope_ids: 'a,b' });
  assert.throws(() => readIntentsParams('op', 'b.x', []), InvalidArgumentError);
  assert.throws(
    () =>
      readIntentsParams(
        'op',
        'b.x',
        Array.from({ length: 1001 }, (_, i) => `k${i}`),
      ),
    InvalidArgumentError,
  );
  assert.throws(() => readIntentsParams('op', 'b.x', ['a,b']), InvalidArgumentError, 'a comma would split the item');
});

test('read results: one snapshot per key in input order, null for an empty item; a short list is refused', () => {
  const row = {
    pending_sequences: '7,,9',
    dirty_generations: '1,,2',
    clean_generations: '0,,2',
    requested_generations: '3,,1',
    handled_generations: '2,,1',
    last_auto_scan_generations: '5,,0',
  };
  const [a, missing, c] = toIntentList('op', row, 'b.x', ['a', 'gone', 'c']);
  assert.deepEqual(a, {
    bindingName: 'b.x',
    scopeId: 'a',
    pendingSequence: 7,
    dirtyGeneration: 1,
    cleanGeneration: 0,
    requestedGeneration: 3,
    handledGeneration: 2,
    lastAutoScanGeneration: 5,
  });
  assert.equal(missing, null);
  assert.equal(c?.scopeId, 'c');
  assert.throws(() => toIntentList('op', row, 'b.x', ['a', 'b']), /3 items for 2 keys/);
});

test('an acknowledgement batch: one binding, the term checked, claims >= 1, an empty clean item for none', () => {
  const acks = [
    { bindingName: 'b.x', scopeId: 'a', claimedRequestGeneration: 2, cleanThroughDirtyGeneration: 4 },
    { bindingName: 'b.x', scopeId: 'b', claimedRequestGeneration: 1 },
  ];
  assert.deepEqual(ackBatchParams('op', term, 'b.x', acks), {
    supervisor_key: 'global',
    holder_id: 'h1',
    supervisor_generation: 3,
    binding_name: 'b.x',
    scope_ids: 'a,b',
    claimed_generations: '2,1',
    clean_throughs: '4,',
  });
  assert.throws(() => ackBatchParams('op', term, 'b.x', []), InvalidArgumentError);
  assert.throws(() => ackBatchParams('op', term, 'b.y', acks), /belongs to its binding/);
  assert.throws(() => ackBatchParams('op', term, 'b.x', [{ ...acks[1], claimedRequestGeneration: 0 }]), InvalidArgumentError);
  assert.throws(() => ackBatchParams('op', { ...term, supervisorGeneration: 0 }, 'b.x', acks), InvalidArgumentError);
  const results = toAckBatch(
    'op',
    {
      outcomes: 'acknowledged,already_handled',
      requested_generations: '2,1',
      handled_generations: '2,1',
      dirty_generations: '4,0',
      clean_generations: '4,0',
    },
    'b.x',
    acks,
  );
  assert.deepEqual(
    results.map((r) => [r.scopeId, r.outcome, r.handledGeneration, r.cleanGeneration]),
    [
      ['a', 'acknowledged', 2, 4],
      ['b', 'already_handled', 1, 0],
    ],
  );
});

test('a scan policy: interval seconds positive, a cron fire a valid Date, off, nothing else', () => {
  assert.deepEqual(schedulePolicyParams('op', { kind: 'interval', intervalSeconds: 60 }), { policy: 'interval', interval_seconds: 60, cron_fire_at: null });
  assert.deepEqual(schedulePolicyParams('op', { kind: 'cron', fireAt: new Date('2026-01-02T03:04:05.006Z') }), {
    policy: 'cron',
    interval_seconds: null,
    cron_fire_at: '2026-01-02 03:04:05.006',
  });
  assert.deepEqual(schedulePolicyParams('op', { kind: 'off' }), { policy: 'off', interval_seconds: null, cron_fire_at: null });
  assert.throws(() => schedulePolicyParams('op', { kind: 'interval', intervalSeconds: 0 }), InvalidArgumentError);
  assert.throws(() => schedulePolicyParams('op', { kind: 'cron', fireAt: new Date(Number.NaN) }), InvalidArgumentError);
  assert.throws(() => schedulePolicyParams('op', { kind: 'weekly' } as never), /unknown schedule policy/);
});
