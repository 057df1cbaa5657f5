// In-memory backoff (RFC 7): ~30 s, ~1 min, ~2 min ... capped at ~30 min with +-10 % jitter;
// unlimited attempts; success clears; a conflict uses a fixed short delay without counting.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BackoffIndex, failureDelayMs, type BackoffPolicy } from '../../src/runtime/backoff.ts';

const SECOND = 1000;
const MINUTE = 60 * SECOND;

function policy(random: () => number = () => 0.5): BackoffPolicy {
  return { baseMs: 30 * SECOND, maxMs: 30 * MINUTE, conflictMs: 2 * SECOND, jitter: 0.1, random };
}

/** A deterministic pseudo-random sequence in [0, 1). */
function lcg(seed = 42): () => number {
  let x = seed;
  return () => (x = (x * 16807) % 2147483647) / 2147483647;
}

describe('failureDelayMs', () => {
  test('without jitter (random = 0.5): 30 s, 1 min, 2 min, 4 min, 8 min, 16 min, then 30 min', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => failureDelayMs(policy(), n));
    assert.deepEqual(delays, [30 * SECOND, MINUTE, 2 * MINUTE, 4 * MINUTE, 8 * MINUTE, 16 * MINUTE, 30 * MINUTE, 30 * MINUTE, 30 * MINUTE]);
  });

  test('jitter stays within +-10 % at both ends of the random range', () => {
    for (let n = 1; n <= 10; n += 1) {
      const nominal = Math.min(30 * MINUTE, 30 * SECOND * 2 ** (n - 1));
      const low = failureDelayMs(
        policy(() => 0),
        n,
      );
      const high = failureDelayMs(
        policy(() => 0.999999),
        n,
      );
      assert.equal(low, Math.round(nominal * 0.9), `n=${n} low`);
      assert.ok(high <= nominal * 1.1 && high >= nominal * 1.0999, `n=${n} high ${high}`);
    }
  });

  test('jittered delays spread around the nominal value and never leave the band', () => {
    const random = lcg();
    const seen = new Set<number>();
    for (let i = 0; i < 500; i += 1) {
      const n = 1 + (i % 12);
      const nominal = Math.min(30 * MINUTE, 30 * SECOND * 2 ** (n - 1));
      const d = failureDelayMs(policy(random), n);
      assert.ok(d >= nominal * 0.9 && d <= nominal * 1.1, `n=${n}: ${d} outside ${nominal} +-10 %`);
      if (n === 1) seen.add(d);
    }
    assert.ok(seen.size > 10, 'jitter actually varies the delay');
  });

  test('the cap holds for very many failures (no overflow, no NaN)', () => {
    for (const n of [30, 64, 1000, 1_000_000]) {
      const d = failureDelayMs(policy(lcg(n)), n);
      assert.ok(Number.isFinite(d) && d >= 27 * MINUTE && d <= 33 * MINUTE, `n=${n}: ${d}`);
    }
  });
});

describe('BackoffIndex', () => {
  test('consecutive failures grow the delay and are unlimited', () => {
    const index = new BackoffIndex(policy());
    const now = 1_000_000;
    assert.equal(index.fail('s', 'model_error', now).nextRetryAt, now + 30 * SECOND);
    assert.equal(index.fail('s', 'timeout', now).nextRetryAt, now + MINUTE);
    assert.equal(index.fail('s', 'crash', now).nextRetryAt, now + 2 * MINUTE);
    let entry = index.get('s')!;
    for (let i = 0; i < 997; i += 1) entry = index.fail('s', 'still failing', now);
    assert.equal(entry.consecutiveFailures, 1000);
    assert.equal(entry.nextRetryAt, now + 30 * MINUTE);
    assert.equal(entry.lastReason, 'still failing');
  });

  test('success clears the entry; the next failure starts again at ~30 s', () => {
    const index = new BackoffIndex(policy());
    index.fail('s', 'x', 0);
    index.fail('s', 'x', 0);
    index.fail('s', 'x', 0);
    index.succeed('s');
    assert.equal(index.get('s'), undefined);
    assert.equal(index.nextDeadline(), null);
    const entry = index.fail('s', 'x', 10);
    assert.equal(entry.consecutiveFailures, 1);
    assert.equal(entry.nextRetryAt, 10 + 30 * SECOND);
  });

  test('keys are independent', () => {
    const index = new BackoffIndex(policy());
    index.fail('a', 'x', 0);
    index.fail('a', 'x', 0);
    assert.equal(index.fail('b', 'x', 0).consecutiveFailures, 1);
    index.succeed('b');
    assert.equal(index.get('a')!.consecutiveFailures, 2);
  });

  test('a conflict uses the fixed short delay and does not change the failure count', () => {
    const index = new BackoffIndex(policy());
    index.fail('s', 'x', 0);
    index.fail('s', 'x', 0);
    const c = index.conflict('s', 'conflict', 5 * MINUTE);
    assert.equal(c.consecutiveFailures, 2);
    assert.equal(c.nextRetryAt, 5 * MINUTE + 2 * SECOND);
    assert.equal(c.lastReason, 'conflict');
    // Repeated conflicts neither grow the delay nor count.
    const again = index.conflict('s', 'conflict', 6 * MINUTE);
    assert.deepEqual([again.consecutiveFailures, again.nextRetryAt], [2, 6 * MINUTE + 2 * SECOND]);
    // The next real failure continues the sequence: the third failure waits ~2 min.
    assert.equal(index.fail('s', 'x', 7 * MINUTE).nextRetryAt, 7 * MINUTE + 2 * MINUTE);
    // A conflict on a key without failures counts zero failures, yet still waits (no spinning).
    const fresh = index.conflict('t', 'conflict', 0);
    assert.deepEqual([fresh.consecutiveFailures, fresh.nextRetryAt], [0, 2 * SECOND]);
    assert.equal(index.fail('t', 'x', 0).consecutiveFailures, 1);
  });

  test('due() returns the keys whose time has come, earliest first, boundary included', () => {
    const index = new BackoffIndex({ ...policy(), baseMs: 100, maxMs: 100_000 });
    index.fail('late', 'x', 500); // 600
    index.fail('early', 'x', 0); // 100
    index.fail('mid', 'x', 200); // 300
    index.fail('future', 'x', 10_000); // 10_100
    assert.deepEqual(index.due(99), []);
    assert.deepEqual(index.due(100), ['early']);
    assert.deepEqual(index.due(600), ['early', 'mid', 'late']);
    assert.deepEqual(
      index.due(600, (k) => k !== 'mid'),
      ['early', 'late'],
    );
    // due() does not consume entries: they stay until success.
    assert.deepEqual(index.due(600), ['early', 'mid', 'late']);
    index.succeed('early');
    assert.deepEqual(index.due(1_000_000), ['mid', 'late', 'future']);
  });

  test('nextDeadline() is the earliest retry time, optionally over waiting keys only', () => {
    const index = new BackoffIndex({ ...policy(), baseMs: 100, maxMs: 100_000 });
    assert.equal(index.nextDeadline(), null);
    index.fail('a', 'x', 1000); // 1100
    index.fail('b', 'x', 0); // 100
    index.conflict('c', 'conflict', 50); // 2050
    assert.equal(index.nextDeadline(), 100);
    // 'b' was already dispatched again: its past deadline must not make the loop wake at once.
    assert.equal(
      index.nextDeadline((k) => k !== 'b'),
      1100,
    );
    assert.equal(
      index.nextDeadline(() => false),
      null,
    );
    index.succeed('b');
    assert.equal(index.nextDeadline(), 1100);
    index.clear();
    assert.equal(index.nextDeadline(), null);
    assert.equal(index.size, 0);
  });
});
