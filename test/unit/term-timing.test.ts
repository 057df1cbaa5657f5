// The term keeper's timing policy (src/runtime/term-timing.ts): renewal delays, the SQLite
// acquisition backoff and the bound of one lease statement.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { acquisitionRetryMs, MIN_STATEMENT_BOUND_MS, periodBoundMs, renewalDelayMs, statementBoundMs } from '../../src/runtime/term-timing.ts';

test('a healthy leader renews every period; a suspended one retries at half the time left, never under 10 ms', () => {
  assert.equal(renewalDelayMs(2000, 9000, false), 2000);
  assert.equal(renewalDelayMs(2000, 9000, true), 2000);
  assert.equal(renewalDelayMs(2000, 1000, true), 500);
  assert.equal(renewalDelayMs(2000, 4, true), 10);
  assert.equal(renewalDelayMs(2000, Number.POSITIVE_INFINITY, true), 2000, 'no term: a period');
});

test('the SQLite acquisition backoff doubles from 100 ms up to a renewal period of at least 1 s', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6].map((n) => acquisitionRetryMs(5000, n)),
    [100, 100, 200, 400, 800, 1600, 3200],
  );
  assert.equal(acquisitionRetryMs(5000, 50), 5000);
  assert.equal(acquisitionRetryMs(200, 50), MIN_STATEMENT_BOUND_MS);
});

test('one lease statement may take a period (at least 1 s) and never outlives the local deadline', () => {
  assert.equal(periodBoundMs(200), 1000);
  assert.equal(statementBoundMs(3000, 10_000), 3000);
  assert.equal(statementBoundMs(200, 10_000), 1000);
  assert.equal(statementBoundMs(3000, 700), 700);
  assert.equal(statementBoundMs(3000, -5), 1, 'a passed deadline still gives the statement 1 ms');
});
