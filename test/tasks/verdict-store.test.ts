// The verdict operations on both backends (pc_task_record_verdict, pc_task_end_attempt with
// worker_exited, pc_task_expire_lost and pc_task_complete reading the recorded verdict and the
// cancel intent), decided by the database under the row lock.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { AttemptLostError } from '../../src/store/errors.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';
import { waitLeaseExpired } from './harness.ts';
import { TEST_TASK_TYPES } from '../fixtures/tasks/types.ts';

const isAttemptLost = (e: unknown) => e instanceof AttemptLostError;

for (const backend of BACKENDS) {
  describe(`durable task verdict operations (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    after(async () => {
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });
    async function fresh(): Promise<TaskStore> {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      return new TaskStore(fx.store as BaseStore);
    }
    const sub = async (tasks: TaskStore) => (await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: {}, timeoutMs: 60_000 })).taskId;
    const end = (code: string, requeue: boolean, workerExited: boolean) => ({
      requeue,
      maxAttempts: 5,
      errorCode: code,
      errorMessage: `${code} message`,
      workerExited,
    });

    test('a verdict is fenced by the token only, the first one wins, a cancel recorded first wins', async () => {
      const tasks = await fresh();
      const a = await sub(tasks);
      const c = (await tasks.claim('w', 1000, TEST_TASK_TYPES))!;
      await waitLeaseExpired(tasks, a);
      assert.equal(await tasks.recordVerdict(a, c.attemptToken, 'timeout'), 'recorded', 'an expired lease does not refuse the runner its verdict');
      assert.equal(await tasks.recordVerdict(a, c.attemptToken, 'interrupted_by_shutdown'), 'kept');
      await assert.rejects(tasks.recordVerdict(a, '00000000-0000-0000-0000-000000000000', 'timeout'), isAttemptLost);
      const b = await sub(tasks);
      const cb = (await tasks.claim('w', 60_000, TEST_TASK_TYPES))!;
      assert.equal((await tasks.cancel(b)).outcome, 'cancel_requested');
      assert.equal(await tasks.recordVerdict(b, cb.attemptToken, 'timeout'), 'cancel_first');
      assert.equal(await tasks.endAttempt(b, cb.attemptToken, end('timeout', false, true)), 'cancelled');
    });

    test("end_attempt: an exited worker's verdict is recorded after its lease expired; a live lease is required otherwise; a timeout is never requeued", async () => {
      const tasks = await fresh();
      const a = await sub(tasks);
      const c = (await tasks.claim('w', 1000, TEST_TASK_TYPES))!;
      await tasks.recordVerdict(a, c.attemptToken, 'timeout');
      await waitLeaseExpired(tasks, a);
      await assert.rejects(tasks.endAttempt(a, c.attemptToken, end('timeout', true, false)), isAttemptLost, 'without worker_exited the lease must be live');
      assert.equal(
        await tasks.endAttempt(a, c.attemptToken, end('worker_exited', true, true)),
        'failed',
        'the recorded timeout wins over the code and the requeue',
      );
      const t = (await tasks.read(a))!;
      assert.deepEqual([t.state, t.errorCode, t.attemptOwner], ['failed', 'timeout', null]);
      await assert.rejects(tasks.endAttempt(a, c.attemptToken, end('timeout', false, true)), isAttemptLost, 'fenced by the attempt');
      // Shutdown verdict: requeue allowed, and the requeued task carries no verdict into its next attempt.
      const b = await sub(tasks);
      let cb = (await tasks.claim('w', 1000, TEST_TASK_TYPES))!;
      await tasks.recordVerdict(b, cb.attemptToken, 'interrupted_by_shutdown');
      await waitLeaseExpired(tasks, b);
      assert.equal(await tasks.endAttempt(b, cb.attemptToken, end('interrupted_by_shutdown', true, true)), 'requeued');
      cb = (await tasks.claim('w', 60_000, TEST_TASK_TYPES))!;
      await tasks.complete(b, cb.attemptToken, { ok: true });
      assert.equal((await tasks.read(b))?.state, 'succeeded');
    });

    test('expire_lost honours a recorded verdict: timeout is not requeued, shutdown keeps its code', async () => {
      const tasks = await fresh();
      const a = await sub(tasks);
      const c = (await tasks.claim('w', 1000, TEST_TASK_TYPES))!;
      await tasks.recordVerdict(a, c.attemptToken, 'timeout');
      await waitLeaseExpired(tasks, a);
      assert.equal(await tasks.expireLost(a, c.attemptToken, true, undefined, { maxAttempts: 5 }), 'failed');
      assert.deepEqual([(await tasks.read(a))?.state, (await tasks.read(a))?.errorCode], ['failed', 'timeout']);
      const b = await sub(tasks);
      const cb = (await tasks.claim('w', 1000, TEST_TASK_TYPES))!;
      await tasks.recordVerdict(b, cb.attemptToken, 'interrupted_by_shutdown');
      await waitLeaseExpired(tasks, b);
      assert.equal(await tasks.expireLost(b, cb.attemptToken, false, undefined, { maxAttempts: 5 }), 'failed');
      assert.equal((await tasks.read(b))?.errorCode, 'interrupted_by_shutdown');
    });

    for (const [name, success] of [
      ['complete', (t: TaskStore, id: number, token: string) => t.complete(id, token, { ok: true })],
      ['succeed', (t: TaskStore, id: number, token: string) => t.succeed(id, token, { ok: true })],
    ] as const)
      test(`${name} refuses a success after a recorded cancel (cancel_requested) or a timeout verdict (attempt_lost), leaving the attempt running`, async () => {
        const tasks = await fresh();
        const a = await sub(tasks);
        const c = (await tasks.claim('w', 60_000, TEST_TASK_TYPES))!;
        await tasks.cancel(a);
        await assert.rejects(success(tasks, a, c.attemptToken), (e: unknown) => (e as { code?: string }).code === 'cancel_requested');
        const refused = (await tasks.read(a))!;
        assert.deepEqual([refused.state, refused.result, refused.attemptOwner], ['running', null, 'w'], 'nothing of the success was written');
        await tasks.finishCancelled(a, c.attemptToken);
        assert.equal((await tasks.read(a))?.state, 'cancelled');
        const b = await sub(tasks);
        const cb = (await tasks.claim('w', 60_000, TEST_TASK_TYPES))!;
        await tasks.recordVerdict(b, cb.attemptToken, 'timeout');
        await assert.rejects(success(tasks, b, cb.attemptToken), isAttemptLost);
        assert.equal((await tasks.read(b))?.state, 'running');
      });

    test('complete (inside the caller transaction) refuses a success after a recorded cancel (cancel_requested) or a timeout verdict (attempt_lost), leaving the attempt running', async () => {
      const tasks = await fresh();
      const a = await sub(tasks);
      const c = (await tasks.claim('w', 60_000, TEST_TASK_TYPES))!;
      await tasks.cancel(a);
      await assert.rejects(tasks.complete(a, c.attemptToken, { ok: true }), (e: unknown) => (e as { code?: string }).code === 'cancel_requested');
      assert.equal((await tasks.read(a))?.state, 'running');
      await tasks.finishCancelled(a, c.attemptToken);
      assert.equal((await tasks.read(a))?.state, 'cancelled');
      const b = await sub(tasks);
      const cb = (await tasks.claim('w', 60_000, TEST_TASK_TYPES))!;
      await tasks.recordVerdict(b, cb.attemptToken, 'timeout');
      await assert.rejects(tasks.complete(b, cb.attemptToken, { ok: true }), isAttemptLost);
      assert.equal((await tasks.read(b))?.state, 'running');
    });
  });
}
