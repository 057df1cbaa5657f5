// pc_task_succeed_batch on both backends: the runner's group commit of its workers' successes.
// Every item is decided by pc_task_complete's rules (each refusal is checked against the single
// call on the same state), a refused item writes nothing and does not stop the others.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { InvalidArgumentError } from '../../src/store/errors.ts';
import { TaskStore, type ClaimedTask, type SuccessItem } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';
import { waitLeaseExpired } from './harness.ts';
import { TEST_TASK_TYPES } from '../fixtures/tasks/types.ts';

const FOREIGN = '00000000-0000-0000-0000-000000000000';
const errorCode = (e: unknown) => (e as { code?: string }).code;

for (const backend of BACKENDS) {
  describe(`pc_task_succeed_batch (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    after(async () => {
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });
    async function fresh(): Promise<TaskStore> {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const tasks = new TaskStore(fx.store as BaseStore);
      await tasks.setCapacity(100);
      return tasks;
    }
    const submit = async (tasks: TaskStore, dedupeKey?: string) =>
      (await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: {}, timeoutMs: 60_000, dedupeKey })).taskId;
    const claim = async (tasks: TaskStore, leaseMs = 60_000): Promise<ClaimedTask> => (await tasks.claim('w', leaseMs, TEST_TASK_TYPES))!;
    const item = (c: ClaimedTask, result: unknown = { id: c.taskId }): SuccessItem => ({
      taskId: c.taskId,
      attemptToken: c.attemptToken,
      resultJson: JSON.stringify(result),
    });

    test('a mixed batch: the live attempts succeed, each refusal is the single call’s error and writes nothing', async () => {
      const tasks = await fresh();
      // The expiring attempt first: its short lease runs out while the others are set up.
      await submit(tasks);
      const late = await claim(tasks, 1000);
      await submit(tasks, 'key-ok');
      const ok = await claim(tasks);
      await submit(tasks);
      const foreign = await claim(tasks);
      await submit(tasks);
      const cancelled = await claim(tasks);
      await tasks.cancel(cancelled.taskId);
      await submit(tasks);
      const timedOut = await claim(tasks);
      await tasks.recordVerdict(timedOut.taskId, timedOut.attemptToken, 'timeout');
      await submit(tasks);
      const ok2 = await claim(tasks);
      await waitLeaseExpired(tasks, late.taskId);
      const missing = { taskId: 9_999_999, attemptToken: ok.attemptToken, resultJson: null };
      const batch: SuccessItem[] = [
        item(ok, { text: 'naïve ✓ 𝄞', n: 1 }),
        item(late),
        { ...item(foreign), attemptToken: FOREIGN },
        item(cancelled),
        item(timedOut),
        missing,
        { ...item(ok2), resultJson: null },
      ];
      // The single call on each refused item, on the same state: the batch must say the same.
      const single: string[] = [];
      for (const i of batch.slice(1)) {
        await tasks.succeed(i.taskId, i.attemptToken, { single: true }).then(
          () => single.push('succeeded'),
          (e: unknown) => single.push(String(errorCode(e))),
        );
      }
      assert.deepEqual(single, ['attempt_lost', 'attempt_lost', 'cancel_requested', 'attempt_lost', 'task_not_found', 'succeeded']);
      // ok2 succeeded through the single call above: in the batch it is a late owner now.
      const { outcomes, claimed } = await tasks.succeedBatch(batch);
      assert.deepEqual(claimed, [], 'no claims asked for');
      assert.deepEqual(outcomes, ['succeeded', 'attempt_lost', 'attempt_lost', 'cancel_requested', 'attempt_lost', 'task_not_found', 'attempt_lost']);
      const done = (await tasks.read(ok.taskId))!;
      assert.deepEqual([done.state, done.result, done.attemptOwner, done.leaseExpiresAt], ['succeeded', { text: 'naïve ✓ 𝄞', n: 1 }, null, null]);
      assert.ok(done.finishedAt);
      assert.deepEqual((await tasks.read(ok2.taskId))?.result, { single: true }, 'a refused item writes nothing');
      for (const c of [late, foreign, cancelled, timedOut]) {
        const t = (await tasks.read(c.taskId))!;
        assert.deepEqual([t.state, t.result, t.finishedAt], ['running', null, null], `task ${c.taskId} untouched`);
      }
      // The dedupe key is released with the success.
      assert.equal((await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: {}, timeoutMs: 60_000, dedupeKey: 'key-ok' })).outcome, 'created');
    });

    test('a NULL result, and a batch of one', async () => {
      const tasks = await fresh();
      await submit(tasks);
      const c = await claim(tasks);
      assert.deepEqual((await tasks.succeedBatch([{ taskId: c.taskId, attemptToken: c.attemptToken, resultJson: null }])).outcomes, ['succeeded']);
      const t = (await tasks.read(c.taskId))!;
      assert.deepEqual([t.state, t.result], ['succeeded', null]);
      assert.deepEqual((await tasks.succeedBatch([{ taskId: c.taskId, attemptToken: c.attemptToken, resultJson: null }])).outcomes, ['attempt_lost']);
    });

    test('malformed batches are refused whole, by the adapter and by the database', async () => {
      const tasks = await fresh();
      const ids: ClaimedTask[] = [];
      for (let i = 0; i < 2; i += 1) {
        await submit(tasks);
        ids.push(await claim(tasks));
      }
      const isInvalid = (e: unknown) => e instanceof InvalidArgumentError;
      await assert.rejects(tasks.succeedBatch([]), isInvalid);
      await assert.rejects(tasks.succeedBatch([item(ids[0]!), item(ids[0]!)]), isInvalid, 'the same task twice');
      await assert.rejects(tasks.succeedBatch([{ ...item(ids[0]!), attemptToken: 'not a token' }]), isInvalid);
      const tooMany = Array.from({ length: 101 }, (_, i) => ({ taskId: i + 1, attemptToken: FOREIGN, resultJson: null }));
      await assert.rejects(tasks.succeedBatch(tooMany), isInvalid);
      const tooManyClaims = { workerId: 'w', leaseMs: 60_000, taskTypes: ['fx-sleep'], maxCount: 101 };
      await assert.rejects(tasks.succeedBatch([item(ids[0]!)], tooManyClaims), isInvalid);
      // Past the adapter: the procedure's own checks.
      const call = (params: Record<string, string>) =>
        tasks.store.callOperation('pc_task_succeed_batch', { ...params, lease_ms: Number(params.lease_ms), max_count: Number(params.max_count) });
      const id = (n: number) => String(n).padStart(18, '0');
      const good = {
        task_ids: id(ids[0]!.taskId) + id(ids[1]!.taskId),
        attempt_tokens: ids[0]!.attemptToken + ids[1]!.attemptToken,
        attempt_token_ends: String(ids[0]!.attemptToken.length).padStart(8, '0') + String(ids[0]!.attemptToken.length * 2).padStart(8, '0'),
        results: '',
        result_ends: '0000000000000000',
        worker_id: 'w',
        lease_ms: '60000',
        task_types: 'fx-sleep',
        max_count: '0',
      };
      for (const bad of [
        { task_ids: id(ids[0]!.taskId) + id(ids[0]!.taskId) },
        { task_ids: id(ids[0]!.taskId) },
        { attempt_token_ends: `00000001${good.attempt_token_ends.slice(8)}` },
        { result_ends: '0000000000000001' },
        { task_ids: 'x'.repeat(36) },
        { results: 'é', result_ends: '0000000100000002' },
        { max_count: '101' },
        { max_count: '-1' },
        { worker_id: '' },
        { task_types: '' },
        { lease_ms: '999' },
      ]) {
        await assert.rejects(call({ ...good, ...bad }), (e: unknown) => errorCode(e) === 'invalid_argument', JSON.stringify(bad));
      }
      for (const c of ids) assert.equal((await tasks.read(c.taskId))?.state, 'running', 'nothing written');
      const [row] = (await call(good)).at(-1)!;
      assert.equal(row?.outcomes, 'succeeded,succeeded');
    });

    test('the claims of the same transaction take the slots the successes freed, never past the cap, and none for a refused item', async () => {
      const tasks = await fresh();
      await tasks.setCapacity(2);
      await submit(tasks);
      const a = await claim(tasks);
      await submit(tasks);
      const b = await claim(tasks);
      const pending = [await submit(tasks), await submit(tasks), await submit(tasks)];
      assert.equal(await tasks.claim('w', 60_000, ['fx-sleep']), null, 'the cap is full');
      const request = { workerId: 'w2', leaseMs: 60_000, taskTypes: ['fx-sleep'], maxCount: 2 };
      // a succeeds, b is refused (foreign token): one slot is free, one task is claimed.
      const first = await tasks.succeedBatch([item(a), { ...item(b), attemptToken: FOREIGN }], request);
      assert.deepEqual(first.outcomes, ['succeeded', 'attempt_lost']);
      assert.deepEqual(
        first.claimed.map((c) => [c.taskId, c.attemptOwner, c.attemptCount]),
        [[pending[0], 'w2', 1]],
      );
      const c0 = first.claimed[0]!;
      assert.ok(c0.leaseExpiresAt.getTime() - c0.dbNow.getTime() > 50_000, "the lease is the request's, by the database clock");
      assert.equal((await tasks.read(pending[0]!))?.state, 'running');
      // b and the claimed task succeed: two slots, two claims (the last pending task, then none left).
      const second = await tasks.succeedBatch([item(b), item(c0)], { ...request, maxCount: 2 });
      assert.deepEqual(second.outcomes, ['succeeded', 'succeeded']);
      assert.deepEqual(
        second.claimed.map((c) => c.taskId),
        [pending[1], pending[2]],
      );
      // With slots to spare, still one claim per success written: a refused item's attempt keeps its slot.
      await tasks.setCapacity(10);
      for (let i = 0; i < 3; i += 1) await submit(tasks);
      const fourth = await tasks.succeedBatch([item(second.claimed[1]!), { ...item(c0), attemptToken: FOREIGN }], { ...request, maxCount: 2 });
      assert.deepEqual(fourth.outcomes, ['succeeded', 'attempt_lost']);
      assert.equal(fourth.claimed.length, 1);
      // maxCount 0 claims nothing even with free slots.
      const third = await tasks.succeedBatch([item(second.claimed[0]!)], { ...request, maxCount: 0 });
      assert.deepEqual([third.outcomes, third.claimed], [['succeeded'], []]);
    });
  });
}
