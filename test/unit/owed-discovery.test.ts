// Owed-request discovery in laps (RFC 5): busy keys are passed over, a full queue pauses the lap
// where it is, a request notified behind the cursor (or during a read) costs one more lap that
// starts only when this one completes, and a lap with pages left asks for another look.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OwedDiscovery, type OwedPage, type OwedTarget } from '../../src/runtime/owed-discovery.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';

/** Owed keys k1..kN at pending sequences 1..N, read in pages of `limit` after a sequence. */
function target(owed: number[], room: number, busy: Set<string> = new Set()) {
  const reads: number[] = [];
  const enqueued: string[] = [];
  const passed: string[] = [];
  let wakes = 0;
  let onRead: (() => void) | null = null;
  const t: OwedTarget & { reads: number[]; enqueued: string[]; passed: string[]; wakes: () => number; onRead: (fn: () => void) => void; room: () => number } = {
    reads,
    enqueued,
    passed,
    wakes: () => wakes,
    onRead: (fn) => {
      onRead = fn;
    },
    async read(after: number, limit: number): Promise<OwedPage> {
      reads.push(after);
      onRead?.();
      onRead = null;
      const keys = owed
        .filter((s) => s > after)
        .slice(0, limit)
        .map((s) => ({ scopeId: `k${s}`, pendingSequence: s, requestedGeneration: 1 }));
      return { keys, exhausted: keys.length < limit };
    },
    busy: (id) => busy.has(id) || enqueued.includes(id),
    passedOver: (id) => {
      passed.push(id);
    },
    room: () => room - enqueued.length,
    enqueue: (id) => {
      enqueued.push(id);
    },
    wake: () => {
      wakes += 1;
    },
  };
  return t;
}

describe('OwedDiscovery', () => {
  test('a lap reads from its cursor, passes busy keys, and ends when the last page is exhausted', async () => {
    const d = new OwedDiscovery(new ManualClock(), 64);
    const t = target([1, 2, 3, 4], 10, new Set(['k2']));
    assert.equal(d.needed, true, 'a lap is due at start');
    await d.discover(t);
    assert.deepEqual(t.enqueued, ['k1', 'k3', 'k4']);
    assert.deepEqual(t.passed, ['k2'], 'the busy key is told it was found owed (its invocation may owe a successor)');
    assert.equal(d.needed, false);
    assert.equal(t.wakes(), 0);
  });

  test('a full queue pauses the lap at the first key without room; the next discovery goes on from there', async () => {
    const d = new OwedDiscovery(new ManualClock(), 64);
    const owed = [1, 2, 3, 4, 5];
    const t = target(owed, 2);
    await d.discover(t);
    assert.deepEqual(t.enqueued, ['k1', 'k2']);
    assert.equal(d.needed, true);
    t.enqueued.splice(0); // both dispatched and done
    await d.discover(t);
    assert.deepEqual(t.reads, [0, 2], 'the second read starts after k2');
    assert.deepEqual(t.enqueued, ['k3', 'k4']);
  });

  test('a notification behind the cursor, or during a read, adds one lap after this one', async () => {
    const d = new OwedDiscovery(new ManualClock(), 2);
    const t = target([1, 2, 3, 4, 5, 6], 100);
    t.onRead(() => d.notify(1)); // k1 notified while the first page is read
    await d.discover(t);
    // Four pages at most per examination: 0 → 2 → 4 → 6 (exhausted), then the revisit lap from 0.
    assert.deepEqual(t.reads, [0, 2, 4, 6]);
    assert.equal(d.needed, true, 'the revisit lap is due');
    assert.equal(t.wakes(), 1, 'pages remain: another examination is asked for');
    await d.discover(t);
    assert.equal(t.reads[4], 0, 'the revisit lap starts before k1');
    assert.equal(d.needed, false);
  });

  test('before the first page of a lap a notification lowers its start; when idle it starts a lap there', async () => {
    const d = new OwedDiscovery(new ManualClock(), 64);
    const t = target([5, 9], 10);
    await d.discover(t);
    assert.equal(d.needed, false);
    d.notify(9);
    d.notify(7);
    assert.equal(d.needed, true);
    t.enqueued.splice(0);
    await d.discover(t);
    assert.equal(t.reads[1], 6, 'the lowest notified sequence minus one');
    d.notify();
    d.reset();
    t.enqueued.splice(0);
    await d.discover(t);
    assert.equal(t.reads[2], 0, 'unknown position or a new term: from the start');
  });

  test('the duration of a discovery is measured on the clock', async () => {
    const clock = new ManualClock();
    const d = new OwedDiscovery(clock, 64);
    const t = target([1], 10);
    const slow = {
      ...t,
      read: async (after: number, limit: number) => {
        await clock.advance(25);
        return t.read(after, limit);
      },
    }; // a slow page
    await d.discover(slow);
    assert.equal(d.lastDurationMs, 25);
  });
});
