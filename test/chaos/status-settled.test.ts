// The chaos suite's status check after a drain (chaos/status.ts, checkStatusSettled): run 2's
// finding was an armed host that passed its crash point after the drain and SIGKILLed itself
// just before `apsup status`, reported as "no live global supervisor". A missing supervisor is
// checked again after the cluster is refilled (bounded); any other report is final at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Violation } from '../../chaos/checker.ts';
import { checkStatusSettled } from '../../chaos/status.ts';

const noLeader: Violation = { invariant: 'status', detail: 'no live global supervisor while a candidate runs' };
const owed: Violation = { invariant: 'status', key: 'ch-a', detail: 'drained but status shows owed work or backlog' };

function script(reports: Violation[][]) {
  const calls = { checks: 0, refills: 0, waited: [] as number[] };
  return {
    calls,
    check: async () => reports[Math.min(calls.checks++, reports.length - 1)]!,
    refill: () => {
      calls.refills += 1;
    },
    wait: async (ms: number) => {
      calls.waited.push(ms);
    },
  };
}

test('a supervisor missing only while a crashed candidate restarts is not a finding', async () => {
  const s = script([[noLeader], []]);
  assert.deepEqual(await checkStatusSettled(s.check, s.refill, s.wait), []);
  assert.deepEqual([s.calls.checks, s.calls.refills, s.calls.waited], [2, 1, [3000]], 'refilled, waited, checked again');
});

test('a supervisor that stays missing is reported after three checks', async () => {
  const s = script([[noLeader]]);
  assert.deepEqual(await checkStatusSettled(s.check, s.refill, s.wait), [noLeader]);
  assert.deepEqual([s.calls.checks, s.calls.refills], [3, 2]);
});

test('any other finding is final at once', async () => {
  const s = script([[owed], []]);
  assert.deepEqual(await checkStatusSettled(s.check, s.refill, s.wait), [owed]);
  assert.deepEqual([s.calls.checks, s.calls.refills], [1, 0]);
});

test('a clean report needs one check', async () => {
  const s = script([[]]);
  assert.deepEqual(await checkStatusSettled(s.check, s.refill, s.wait), []);
  assert.equal(s.calls.checks, 1);
});
