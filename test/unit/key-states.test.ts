// The key-state table of a family partition (RFC 2, 7): a key is at most one of ready, running,
// settling and retry-wait; the ready queue is bounded and keeps its order; every other move throws.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { IllegalKeyTransition, KeyStateTable } from '../../src/runtime/key-states.ts';

const term = { supervisorKey: 'global', holderId: 'h', supervisorGeneration: 1 };
const start = (key: string) => ({ workerId: `w-${key}`, term, generation: 0 });

describe('KeyStateTable', () => {
  test('a busy key is never enqueued twice, whatever its mode; the queue is bounded', () => {
    const t = new KeyStateTable(2);
    assert.equal(t.enqueue('a', 'request'), true);
    assert.equal(t.enqueue('a', 'scan'), false, 'ready');
    assert.equal(t.enqueue('b', 'scan'), true);
    assert.equal(t.enqueue('c', 'scan'), false, 'queue full');
    assert.equal(t.room(), 0);
    assert.equal(t.startNext(start)?.key, 'a');
    assert.equal(t.enqueue('a', 'request'), false, 'running');
    t.settle('a');
    assert.equal(t.enqueue('a', 'request'), false, 'settling');
    t.waitForRetry('a', 'request');
    assert.equal(t.enqueue('a', 'request'), false, 'retry-wait');
    assert.deepEqual([t.count('ready'), t.count('running'), t.count('settling'), t.count('retry_wait')], [1, 0, 0, 1]);
    assert.equal(t.readyFromScan(), 1);
  });

  test('ready keys start in queue order; settling frees the running count but not the key', () => {
    const t = new KeyStateTable(10);
    for (const k of ['x', 'y', 'z']) t.enqueue(k, 'scan');
    assert.deepEqual(t.keys('ready'), ['x', 'y', 'z']);
    const first = t.startNext(start)!;
    assert.equal(first.key, 'x');
    assert.equal(first.invocation.source, 'scan');
    assert.equal(t.invocationOf('x')?.workerId, 'w-x');
    t.settle('x');
    assert.equal(t.count('running'), 0);
    assert.equal(t.get('x')?.mode, 'settling');
    assert.equal(t.invocationOf('x')?.workerId, 'w-x', 'still known while settling');
    t.finish('x');
    assert.equal(t.busy('x'), false);
    assert.equal(t.peek(), 'y');
  });

  test('a retry keeps the origin of the first failure until the key leaves or the term changes', () => {
    const t = new KeyStateTable(10);
    t.enqueue('k', 'scan');
    t.startNext(start);
    t.waitForRetry('k', 'scan');
    assert.equal(t.promote('k'), true);
    const retry = t.startNext(start)!;
    assert.equal(retry.invocation.source, 'retry');
    assert.equal(t.get('k')?.origin, 'scan');
    t.waitForRetry('k'); // a conflict: the origin stays
    assert.equal(t.get('k')?.origin, 'scan');
    t.finish('k');
    assert.equal(t.get('k')?.mode, 'retry_wait', 'finishing an invocation never drops a retry-wait key');
    t.resetForNewTerm();
    assert.equal(t.busy('k'), false, 'a new term forgets retry-wait keys');
  });

  test('a new term drops ready and retry-wait keys, keeps running invocations without their origin', () => {
    const t = new KeyStateTable(10);
    t.enqueue('w', 'scan');
    t.startNext(start);
    t.waitForRetry('w', 'scan');
    t.promote('w');
    t.startNext(start); // w runs its retry
    t.enqueue('r', 'request');
    t.startNext(start);
    t.enqueue('q', 'scan');
    t.enqueue('z', 'scan');
    t.startNext(start);
    t.waitForRetry('q', 'scan');
    t.resetForNewTerm();
    assert.deepEqual([t.count('ready'), t.count('running'), t.count('retry_wait')], [0, 2, 0]);
    assert.equal(t.busy('z'), false);
    assert.equal(t.busy('q'), false);
    assert.equal(t.get('w')?.origin, undefined);
    assert.equal(t.invocationOf('w')?.source, 'retry');
    t.enqueue('n', 'request');
    t.dropReady();
    assert.deepEqual([t.count('ready'), t.count('running')], [0, 2]);
  });

  test('every move its mode does not allow throws', () => {
    const t = new KeyStateTable(1);
    assert.throws(() => t.settle('nobody'), IllegalKeyTransition);
    t.enqueue('a', 'request');
    assert.throws(() => t.waitForRetry('a'), IllegalKeyTransition, 'ready cannot fail');
    assert.throws(() => t.promote('a'), IllegalKeyTransition, 'only retry-wait is promoted');
    t.startNext(start);
    t.waitForRetry('a');
    t.enqueue('b', 'request');
    assert.equal(t.promote('a'), false, 'a promotion needs room');
    assert.equal(t.get('a')?.mode, 'retry_wait');
  });
});
