// The outcome of an invocation whose worker process exited first (src/runtime/worker-outcome.ts):
// a timeout wins over a late reply, a late reply counts after the exit but never commits a deferred
// acknowledgement, anything else is a crash.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exitOutcome, reportOf, type ExitFacts } from '../../src/runtime/worker-outcome.ts';
import type { ResultMessage } from '../../src/worker/protocol.ts';

const base: ExitFacts = { durationMs: 12, pid: 42, exitCode: null, signal: 'SIGTERM', timedOut: false, timeoutMs: 500, startingUp: false, late: null };
const deferred: ResultMessage = { type: 'result', invocationId: 1, durationMs: 3, status: 'ok', acknowledgement: { kind: 'deferred', confirmClean: false } };
const failed: ResultMessage = { type: 'result', invocationId: 1, durationMs: 3, status: 'failed', error: { name: 'Error', message: 'aborted' } };

test('a timeout is the outcome even when the processor replied during the termination', () => {
  const o = exitOutcome({ ...base, timedOut: true, late: failed, startingUp: true });
  assert.equal(o.status, 'timeout');
  assert.match(o.error?.message ?? '', /exceeded 500 ms \(the worker process was still starting up\); the processor replied failed/);
  assert.deepEqual([o.durationMs, o.pid], [12, 42]);
});

test('a reply received while the process was terminated for another reason counts after the exit', () => {
  assert.deepEqual(exitOutcome({ ...base, late: failed }), { status: 'failed', error: { name: 'Error', message: 'aborted' }, durationMs: 12, pid: 42 });
});

test('a deferred acknowledgement of a terminated worker is not committed', () => {
  const o = exitOutcome({ ...base, late: deferred });
  assert.equal(o.status, 'not_acknowledged');
});

test('an exit with no reply and no timeout is a crash', () => {
  const o = exitOutcome({ ...base, exitCode: 1, signal: null });
  assert.equal(o.status, 'crashed');
  assert.equal(o.error?.message, 'worker exited (code 1, signal null)');
});

test('reportOf drops the routing fields', () => {
  assert.deepEqual(reportOf(failed), { status: 'failed', error: { name: 'Error', message: 'aborted' } });
});
