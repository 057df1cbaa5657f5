// AttemptProcess on a reused task worker process: an attempt that ended cleanly leaves nothing
// on the process's objects. A host's processes run thousands of attempts each; whatever one
// attempt subscribes to the process for must go with the attempt, or the host grows without
// bound (and, at the process's exit, every attempt it ever ran wakes up at once).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createLogger } from '../../src/logging.ts';
import { TaskWorker } from '../../src/tasks/attempt-pool.ts';
import { AttemptProcess } from '../../src/tasks/attempt-process.ts';
import type { TaskConfig } from '../../src/tasks/config.ts';
import type { ClaimedTask, TaskStore } from '../../src/tasks/task-store.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The parts of a forked child AttemptProcess and TaskWorker use; its exit is the test's to give. */
class FakeChild extends EventEmitter {
  connected = true;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  pid = 424242;
  sent: unknown[] = [];
  send(message: unknown, callback?: () => void): boolean {
    this.sent.push(message);
    callback?.();
    return true;
  }
  kill(): boolean {
    return true;
  }
  exit(code: number): void {
    this.exitCode = code;
    this.connected = false;
    this.emit('exit', code, null);
    this.emit('disconnect');
  }
}

function fakeWorker(): { worker: TaskWorker; child: FakeChild } {
  const child = new FakeChild();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal })),
  );
  const worker = new TaskWorker({ child: child as unknown as ChildProcess, exited } as never);
  child.emit('message', { type: 'ready', pid: child.pid });
  return { worker, child };
}

const config = { tasksModule: '', leaseMs: 60_000, progressMinStep: 0.01, terminateGraceMs: 1000 } as TaskConfig;
const logger = createLogger({ level: 'silent' });
const noStore = {} as TaskStore; // a ready process gets the attempt at once: no lease to keep

function task(taskId: number): ClaimedTask {
  return {
    taskId,
    taskType: 'fx-quick',
    handlerVersion: 1,
    payload: { filler: 'x'.repeat(10_000) },
    timeoutMs: 60_000,
    attemptCount: 1,
    attemptToken: `token-${taskId}`,
    attemptOwner: 'test',
    leaseExpiresAt: new Date(),
    resumedFromTaskId: null,
    dbNow: new Date(),
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('attempts that ended cleanly on a reused process are not kept by it, nor woken at its exit', async () => {
  const { worker, child } = fakeWorker();
  const refs: WeakRef<AttemptProcess>[] = [];
  const N = 200;
  for (let id = 1; id <= N; id += 1) {
    const attempt = new AttemptProcess(task(id), worker, noStore, config, logger);
    refs.push(new WeakRef(attempt));
    child.emit('message', { type: 'task-result', taskId: id, status: 'succeeded', reusable: true });
    assert.equal(attempt.finishedClean, true);
    await attempt.ended;
  }
  assert.equal(child.sent.length, N, 'each attempt was handed to the same process');
  assert.equal(child.listenerCount('message'), 0, 'no attempt still listens to the process');
  assert.equal(child.listenerCount('exit'), 1, "only the worker's own exit watch");
  await turn();
  gc();
  await turn();
  gc();
  const kept = refs.filter((r) => r.deref() !== undefined).length;
  assert.ok(kept <= 1, `${kept} of ${N} ended attempts are still reachable from the process`);
  child.exit(0);
  await turn();
  assert.equal(child.listenerCount('disconnect'), 0, 'no ended attempt waits for the channel to close');
});

test('an attempt whose process exits ends once the channel closed', async () => {
  const { worker, child } = fakeWorker();
  const attempt = new AttemptProcess(task(1), worker, noStore, config, logger);
  let ended = false;
  void attempt.ended.then(() => {
    ended = true;
  });
  child.exitCode = 1;
  child.emit('exit', 1, null); // the channel is still open: its last messages may be on the way
  await turn();
  assert.equal(ended, false, 'not over before the channel closed');
  child.emit('message', { type: 'task-result', taskId: 1, status: 'returned', reusable: false });
  assert.equal(attempt.reported?.status, 'returned', 'a message sent right before the exit still counts');
  child.connected = false;
  child.emit('disconnect');
  await attempt.ended;
  assert.equal(ended, true);
});

test('an attempt handed a process that already exited ends at once', async () => {
  const { worker, child } = fakeWorker();
  child.exit(1);
  await worker.exited;
  const attempt = new AttemptProcess(task(1), worker, noStore, config, logger);
  await attempt.ended;
  assert.equal(attempt.finishedClean, false);
  assert.equal(child.sent.length, 0, 'nothing is sent to a process that exited');
});
