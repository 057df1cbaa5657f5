// AttemptSettler and the runner's single-task writes, against fakes of the store and the attempt:
// the first stop reason wins and only a timeout or shutdown is recorded as a verdict (a lost
// attempt is not: its lease already expired), a stop of an attempt whose success is being
// committed does nothing, a convergence that asks for a retry is retried by the next sweep and
// by nothing else, a lost attempt of this runner's own is terminated instead of converged, and a
// success written alone maps its refusals to outcomes. The real paths: runner.test.ts, verdicts.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../src/logging.ts';
import { systemClock } from '../../src/runtime/clock.ts';
import { AttemptLostError } from '../../src/store/errors.ts';
import type { AttemptProcess } from '../../src/tasks/attempt-process.ts';
import { AttemptSettler } from '../../src/tasks/attempt-settler.ts';
import type { TaskConfig } from '../../src/tasks/config.ts';
import type { AttemptRef, ConvergeResult, Converger, Ending } from '../../src/tasks/convergence.ts';
import { RunnerStats } from '../../src/tasks/runner-stats.ts';
import { commitOneSuccess } from '../../src/tasks/runner-writes.ts';
import type { ClaimedTask, TaskStore } from '../../src/tasks/task-store.ts';
import { settleWithin } from '../../src/tasks/timers.ts';
import { newTaskWorkerId } from '../../src/tasks/worker-id.ts';

const logger = createLogger({ level: 'silent' });
const config = { maxTimeoutMs: 60_000 } as TaskConfig;

function task(taskId: number, token = `tok-${taskId}`): ClaimedTask {
  return {
    taskId,
    taskType: 'fx',
    handlerVersion: 1,
    payload: {},
    timeoutMs: 120_000,
    attemptCount: 1,
    attemptToken: token,
    attemptOwner: 'w',
    leaseExpiresAt: new Date(),
    resumedFromTaskId: null,
    dbNow: new Date(),
  };
}

/** The parts of an AttemptProcess the settler reads; terminate() records its reasons. */
function attempt(t: ClaimedTask, state: Partial<AttemptProcess> = {}) {
  const terminated: string[] = [];
  const a = {
    task: t,
    finishedClean: false,
    success: null,
    stopReason: null,
    alive: true,
    reported: null,
    child: { pid: 1 },
    terminate: async (reason: string) => {
      terminated.push(reason);
    },
    ...state,
  } as unknown as AttemptProcess;
  return { a, terminated };
}

function settler(
  over: { tasks?: Partial<TaskStore>; converge?: (ref: AttemptRef, e: Ending) => Promise<ConvergeResult>; running?: Map<number, AttemptProcess> } = {},
) {
  const verdicts: Array<[number, string]> = [];
  const converged: Array<[number, string]> = [];
  const tasks = {
    recordVerdict: async (id: number, _token: string, verdict: string) => {
      verdicts.push([id, verdict]);
      return 'recorded';
    },
    listLost: async () => [],
    ...over.tasks,
  } as unknown as TaskStore;
  const converger = {
    converge: async (ref: AttemptRef, e: Ending): Promise<ConvergeResult> => {
      converged.push([ref.taskId, e.code]);
      return over.converge ? over.converge(ref, e) : { result: 'converged', outcome: 'failed' };
    },
  } as unknown as Converger;
  const s = new AttemptSettler({
    tasks,
    converger,
    config,
    stats: new RunnerStats(),
    logger,
    clock: systemClock,
    running: over.running ?? new Map(),
    track: (p) => p,
    taskTypes: () => ['fx'],
  });
  return { s, verdicts, converged };
}

test('the first stop reason wins; timeout and shutdown are recorded as verdicts, a lost attempt is not', async () => {
  const { s, verdicts } = settler();
  const timedOut = attempt(task(1));
  await s.stop(timedOut.a, 'timeout');
  await s.stop(timedOut.a, 'shutdown');
  assert.equal(timedOut.a.stopReason, 'timeout');
  assert.deepEqual(verdicts, [[1, 'timeout']], 'the later shutdown records nothing');
  const lost = attempt(task(2));
  await s.stop(lost.a, 'lost');
  await s.stop(lost.a, 'shutdown');
  assert.equal(lost.a.stopReason, 'lost');
  const stopping = attempt(task(3));
  await s.stop(stopping.a, 'shutdown');
  assert.deepEqual(verdicts, [
    [1, 'timeout'],
    [3, 'interrupted_by_shutdown'],
  ]);
});

test('a stop of an attempt that ended cleanly or whose success is being committed does nothing', async () => {
  const { s, verdicts } = settler();
  const clean = attempt(task(1), { finishedClean: true } as Partial<AttemptProcess>);
  const committing = attempt(task(2), { success: Promise.resolve('succeeded') } as Partial<AttemptProcess>);
  await s.stop(clean.a, 'timeout');
  await s.stop(committing.a, 'shutdown');
  assert.deepEqual(verdicts, []);
  assert.deepEqual([...clean.terminated, ...committing.terminated], []);
  assert.equal(clean.a.stopReason, null);
});

test('settle converges an exited attempt with its verdict; a convergence to retry is retried by the next sweep only', async () => {
  let failHook = true;
  const { s, converged } = settler({ converge: async () => (failHook ? { result: 'retry' } : { result: 'converged', outcome: 'requeued' }) });
  const t = attempt(task(7));
  await s.stop(t.a, 'timeout');
  s.launched(7);
  assert.equal(await s.settle(t.a, false), false, 'nothing was written by the child');
  assert.deepEqual(converged, [[7, 'timeout']]);
  await s.reconcile();
  assert.deepEqual(converged, [
    [7, 'timeout'],
    [7, 'timeout'],
  ]);
  failHook = false;
  await s.reconcile();
  await s.reconcile();
  assert.equal(converged.length, 3, 'converged once more, then never again');
});

test("the sweep terminates this runner's own lost attempt instead of converging it, and converges another runner's", async () => {
  const mine = attempt(task(1, 'mine'));
  const running = new Map([[1, mine.a]]);
  const lost = [
    { taskId: 1, taskType: 'fx', handlerVersion: 1, attemptToken: 'mine', leaseExpiresAt: new Date() },
    { taskId: 2, taskType: 'fx', handlerVersion: 1, attemptToken: 'theirs', leaseExpiresAt: new Date() },
  ];
  const { s, converged, verdicts } = settler({ running, tasks: { listLost: (async () => lost) as TaskStore['listLost'] } });
  await s.reconcile();
  assert.deepEqual(mine.terminated, ['lost']);
  assert.deepEqual(verdicts, [], 'a lost attempt records no verdict');
  assert.deepEqual(converged, [[2, 'lost']]);
});

test('a success written alone maps its refusals to outcomes and rethrows anything else', async () => {
  const item = { taskId: 1, attemptToken: 't', resultJson: '{"a":1}' };
  const store = (error: unknown) => ({ succeed: async () => (error ? Promise.reject(error) : undefined) }) as unknown as TaskStore;
  assert.equal(await commitOneSuccess(store(null), item), 'succeeded');
  assert.equal(await commitOneSuccess(store(new AttemptLostError('pc_task_succeed')), item), 'attempt_lost');
  for (const code of ['cancel_requested', 'task_not_found'] as const) {
    assert.equal(await commitOneSuccess(store(Object.assign(new Error(code), { code })), item), code);
  }
  const other = Object.assign(new Error('connection lost'), { code: 'ECONNRESET' });
  await assert.rejects(commitOneSuccess(store(other), item), (e) => e === other);
});

test('settleWithin returns when the work settles, rejected or not, or when the bound passes', async () => {
  const started = performance.now();
  await settleWithin(Promise.reject(new Error('x')), 10_000);
  await settleWithin(Promise.resolve(1), 10_000);
  assert.ok(performance.now() - started < 1000);
  await settleWithin(new Promise(() => undefined), 20);
  assert.match(newTaskWorkerId(), /^tasks:[A-Za-z0-9_.-]{1,50}:\d+:[0-9a-f]{8}$/);
});
