// The claims made with a group commit of successes (src/tasks/success-claims.ts), against a
// scripted store: one claim per reusable process freed, refused items' claims given back, claims
// hold their slots until they start, and nothing starts once the runner stopped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import type { AttemptProcess } from '../../src/tasks/attempt-process.ts';
import type { TaskConfig } from '../../src/tasks/config.ts';
import type { TaskRegistry } from '../../src/tasks/registry.ts';
import { SuccessClaims } from '../../src/tasks/success-claims.ts';
import type { ClaimedTask, ClaimRequest, SuccessItem, SuccessOutcome, TaskStore } from '../../src/tasks/task-store.ts';

const item = (taskId: number): SuccessItem => ({ taskId, attemptToken: 'a'.repeat(32), resultJson: null });
const claimed = (taskId: number): ClaimedTask => ({
  taskId,
  taskType: 'fx',
  handlerVersion: 1,
  payload: null,
  timeoutMs: 1000,
  attemptCount: 1,
  attemptToken: 'b'.repeat(32),
  attemptOwner: 'w',
  leaseExpiresAt: new Date(),
  resumedFromTaskId: null,
  dbNow: new Date(),
});
const tick = () => new Promise((r) => setImmediate(r));

function setup(outcomes: SuccessOutcome[], claims: number[], reusable: Record<number, boolean>) {
  const requests: ClaimRequest[] = [];
  const givenBack: number[] = [];
  const launched: number[] = [];
  let stopped = false;
  const tasks = {
    async succeedBatch(_items: readonly SuccessItem[], claim: ClaimRequest) {
      requests.push(claim);
      return { outcomes, claimed: claims.slice(0, claim.maxCount).map(claimed) };
    },
    async transaction(fn: (tx: unknown) => Promise<unknown>) {
      return fn(null);
    },
    async endAttempt(taskId: number) {
      givenBack.push(taskId);
    },
  } as unknown as TaskStore;
  const running = new Map(Object.entries(reusable).map(([id, r]) => [Number(id), { reported: { reusable: r } } as unknown as AttemptProcess]));
  const sc = new SuccessClaims({
    tasks,
    registry: { types_: () => ['fx'] } as unknown as TaskRegistry,
    config: { leaseMs: 30_000, maxAttempts: 3 } as TaskConfig,
    logger: createLogger({ level: 'silent' }),
    workerId: 'w',
    running,
    stopped: () => stopped,
    launch: (task) => launched.push(task.taskId),
    track: (p) => p,
  });
  return { sc, requests, givenBack, launched, stop: () => (stopped = true) };
}

test('one claim per success whose process is reusable; the claims hold their slots until they start on the next turn', async () => {
  const s = setup(['succeeded', 'succeeded', 'succeeded'], [11, 12, 13], { 1: true, 2: false, 3: true });
  assert.deepEqual(await s.sc.commit([item(1), item(2), item(3)]), ['succeeded', 'succeeded', 'succeeded']);
  assert.equal(s.requests[0].maxCount, 2, 'the process that will not be reused frees no claim');
  assert.equal(s.sc.reserved, 2);
  assert.deepEqual(s.launched, []);
  await tick();
  assert.deepEqual(s.launched, [11, 12]);
  assert.deepEqual([s.sc.reserved, s.sc.claimed], [0, 2]);
});

test("a refused item's claim goes back to pending at once: its attempt still holds its slot", async () => {
  const s = setup(['succeeded', 'attempt_lost'], [11, 12], { 1: true, 2: true });
  await s.sc.commit([item(1), item(2)]);
  assert.equal(s.requests[0].maxCount, 2);
  await tick();
  await tick();
  assert.deepEqual(s.launched, [11]);
  assert.deepEqual(s.givenBack, [12]);
  assert.equal(s.sc.claimed, 1);
});

test('claims made while the runner stops are given back, never started', async () => {
  const s = setup(['succeeded'], [11], { 1: true });
  await s.sc.commit([item(1)]);
  s.stop();
  await tick();
  await tick();
  assert.deepEqual(s.launched, []);
  assert.deepEqual(s.givenBack, [11]);
  assert.equal(s.sc.reserved, 0);
});

test('a stopped runner claims nothing with its successes', async () => {
  const s = setup(['succeeded'], [11], { 1: true });
  s.stop();
  await s.sc.commit([item(1)]);
  assert.equal(s.requests[0].maxCount, 0);
  await tick();
  assert.deepEqual([s.launched, s.givenBack], [[], []]);
});
