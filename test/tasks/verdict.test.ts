// verdictOf (src/tasks/verdict.ts): the first reason the runner reached decides how an attempt
// whose worker exited is ended; a timeout is never requeued.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { verdictOf, type ExitedAttempt } from '../../src/tasks/verdict.ts';
import type { TaskResultMessage } from '../../src/tasks/worker-protocol.ts';

const base: ExitedAttempt = { stopReason: null, reported: null, hostStopping: false, timeoutMs: 3000 };
const reported = (status: TaskResultMessage['status'], errorCode?: string): TaskResultMessage => ({ type: 'task-result', taskId: 1, status, errorCode });
const code = (a: Partial<ExitedAttempt>) => {
  const v = verdictOf({ ...base, ...a });
  return v.kind !== 'end' ? v.kind : `${v.code}${v.requeue ? '+requeue' : ''}`;
};

test('a timeout wins over whatever the child reported and is never requeued', () => {
  assert.equal(code({ stopReason: 'timeout' }), 'timeout');
  assert.equal(code({ stopReason: 'timeout', reported: reported('attempt_lost', 'attempt_lost') }), 'timeout');
  assert.equal(code({ stopReason: 'timeout', reported: reported('interrupted'), hostStopping: true }), 'timeout');
});

test('a terminal write by the child stands unless the runner stopped it for a timeout or a loss', () => {
  assert.equal(code({ reported: reported('succeeded') }), 'written');
  assert.equal(code({ stopReason: 'shutdown', reported: reported('succeeded') }), 'written');
  assert.equal(code({ reported: reported('cancelled') }), 'written');
  assert.equal(code({ stopReason: 'lost', reported: reported('succeeded') }), 'lost+requeue');
});

test('losses, shutdowns and crashes may requeue idempotent types', () => {
  assert.equal(code({ reported: reported('attempt_lost', 'attempt_lost') }), 'attempt_lost+requeue');
  assert.equal(code({ stopReason: 'shutdown' }), 'interrupted_by_shutdown+requeue');
  assert.equal(code({ hostStopping: true }), 'interrupted_by_shutdown+requeue');
  assert.equal(code({ reported: reported('failed', 'worker_error') }), 'worker_error+requeue');
  assert.equal(code({}), 'worker_exited+requeue');
});

test('a handler module the worker could not import is ended by the runner (with its hook), never requeued', () => {
  assert.equal(code({ reported: reported('load_failed', 'handler_load_failed') }), 'handler_load_failed');
});

test("a success left to the runner ('returned') is what the runner's commit made of it; a stop for a timeout or a loss still wins", () => {
  const returned = reported('returned');
  assert.equal(code({ reported: returned, success: 'succeeded' }), 'written');
  assert.equal(code({ stopReason: 'shutdown', reported: returned, success: 'succeeded' }), 'written');
  assert.equal(code({ reported: returned, success: 'cancel_requested' }), 'cancelled');
  assert.equal(code({ reported: returned, success: 'attempt_lost' }), 'attempt_lost+requeue');
  assert.equal(code({ reported: returned, success: 'error' }), 'success_not_recorded+requeue');
  assert.equal(code({ reported: returned, success: 'task_not_found' }), 'gone');
  assert.equal(code({ reported: returned }), 'success_not_recorded+requeue', 'never written without a commit');
  assert.equal(code({ stopReason: 'timeout', reported: returned }), 'timeout');
  assert.equal(code({ stopReason: 'lost', reported: returned }), 'lost+requeue');
});
