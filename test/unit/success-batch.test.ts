// pc_task_succeed_batch's parameters and result (src/tasks/success-batch.ts): refused before any
// SQL, items as fixed-width ids and indexed lists, outcomes in input order after the claimed rows.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../src/store/errors.ts';
import { succeedBatchParams, toSuccessBatch } from '../../src/tasks/success-batch.ts';

const TOKEN_A = '0123456789abcdef0123456789abcdef';
const TOKEN_B = 'fedcba9876543210fedcba9876543210';

test('items: fixed-width task ids, indexed tokens and results; no claim unless asked', () => {
  const p = succeedBatchParams('op', [
    { taskId: 12, attemptToken: TOKEN_A, resultJson: '{"ok":true}' },
    { taskId: 7, attemptToken: TOKEN_B, resultJson: null },
  ]);
  assert.equal(p.task_ids, `${'12'.padStart(18, '0')}${'7'.padStart(18, '0')}`);
  assert.equal(p.attempt_tokens, TOKEN_A + TOKEN_B);
  assert.equal(p.attempt_token_ends, '0000003200000064');
  assert.equal(p.results, '{"ok":true}');
  assert.equal(p.result_ends, '0000001100000011');
  assert.equal(p.max_count, 0);
});

test('refused: no items, a task twice, a malformed token, an empty result text, a bad claim', () => {
  const item = { taskId: 1, attemptToken: TOKEN_A, resultJson: null };
  assert.throws(() => succeedBatchParams('op', []), InvalidArgumentError);
  assert.throws(() => succeedBatchParams('op', [item, { ...item, attemptToken: TOKEN_B }]), /appears twice/);
  assert.throws(() => succeedBatchParams('op', [{ ...item, attemptToken: 'x' }]), InvalidArgumentError);
  assert.throws(() => succeedBatchParams('op', [{ ...item, resultJson: '' }]), /JSON text or null/);
  assert.throws(() => succeedBatchParams('op', [item], { workerId: 'w 1', leaseMs: 5000, taskTypes: ['t'], maxCount: 1 }), /worker id/);
  assert.throws(() => succeedBatchParams('op', [item], { workerId: 'w1', leaseMs: 10, taskTypes: ['t'], maxCount: 1 }), /lease/);
});

test('the result: outcomes in input order; claimed rows first when asked for; anything else is refused', () => {
  assert.deepEqual(toSuccessBatch('op', [[{ outcomes: 'succeeded,attempt_lost' }]], 2), { outcomes: ['succeeded', 'attempt_lost'], claimed: [] });
  assert.throws(() => toSuccessBatch('op', [[{ outcomes: 'succeeded' }]], 2), /unexpected result/);
  assert.throws(() => toSuccessBatch('op', [[{ outcomes: 'succeeded,maybe' }]], 2), /unexpected result/);
});
