// The pause between attempts of a transaction the server rolled back as a deadlock (mysql-store.ts):
// random, so that two racing batches do not meet again in step, and doubling with each attempt.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deadlockRetryPauseMs } from '../../src/store/mysql/mysql-store.ts';

test('the pause before attempt n + 1 is uniform in [0, 10 * 2^(n - 1)] ms', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((n) => deadlockRetryPauseMs(n, () => 0)),
    [0, 0, 0, 0, 0],
  );
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((n) => deadlockRetryPauseMs(n, () => 0.999999)),
    [9, 19, 39, 79, 159],
  );
  const pauses = Array.from({ length: 2000 }, () => deadlockRetryPauseMs(3));
  assert.ok(pauses.every((p) => Number.isInteger(p) && p >= 0 && p < 40));
  assert.ok(new Set(pauses).size > 20, 'spread over the range, not one value');
});
