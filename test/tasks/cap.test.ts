// The durable task claim cap is the database's (ADR T6) and a worker claims only the task types
// its registry knows, on both backends, with real processes: worker processes with different
// CAPACITY settings (one set to 10) never run more than the database cap together; claim
// processes racing over many pending tasks take exactly the cap; `apsup tasks set-capacity`
// validates and changes it; a worker with an older registry leaves a newer type pending for a
// worker that knows it (a rolling deploy).
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { InvalidArgumentError } from '../../src/store/errors.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { TEST_TASK_TYPES } from '../fixtures/tasks/types.ts';
import {
  FIXTURE_TASKS_MODULE,
  REPO_ROOT,
  StoreChild,
  makeRunner,
  waitLeaseExpired,
  createFixtureTables,
  events,
  isTerminal,
  runCli,
  startCli,
  stopChild,
  waitForTask,
  processTestHooks,
} from './harness.ts';

const OLDER_TASKS_MODULE = path.join(REPO_ROOT, 'test', 'fixtures', 'tasks', 'registry-older.ts');

async function running(fx: BackendFixture): Promise<number> {
  return Number((await fx.query("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE state = 'running'"))[0].n);
}

for (const backend of BACKENDS) {
  describe(`durable task claim cap and known types (${backend})`, () => {
    const claimers: StoreChild[] = [];
    const { fixtures, workers, runners } = processTestHooks(async () => {
      for (const c of claimers.splice(0)) await c.close();
    });
    async function fresh(): Promise<{ fx: BackendFixture; tasks: TaskStore }> {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      await createFixtureTables(fx);
      return { fx, tasks: new TaskStore(fx.store as BaseStore) };
    }

    test('T6 worker processes with CAPACITY 10, 4, 2 and 1 never run more than the database cap (4) together, and use it', async () => {
      const { fx, tasks } = await fresh();
      const ids: number[] = [];
      for (let i = 0; i < 12; i += 1)
        ids.push((await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: { ms: 1500 }, timeoutMs: 120_000 })).taskId);
      const env = { POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: FIXTURE_TASKS_MODULE, SWEEP_SECONDS: '3600' };
      // The generous one first: with a per-process cap it alone would take 10.
      for (const capacity of ['10', '4', '2', '1']) workers.push(startCli(fx, ['tasks', 'worker'], { ...env, CAPACITY: capacity }));
      let maxRunning = 0;
      await waitFor(
        async () => {
          maxRunning = Math.max(maxRunning, await running(fx));
          const finished = Number((await fx.query("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE state IN ('succeeded', 'failed', 'cancelled')"))[0].n);
          return finished === ids.length;
        },
        120_000,
        10,
      );
      assert.equal(maxRunning, 4, `the database cap bounds every process together (saw ${maxRunning} running)`);
      for (const id of ids) assert.equal((await tasks.read(id))?.state, 'succeeded');
      // Handler-side intervals: never more than the cap at once.
      const points = (await events(fx))
        .filter((e) => e.event === 'start' || e.event === 'end')
        .map((e) => ({ at: e.atMs, delta: e.event === 'start' ? 1 : -1 }))
        .sort((a, b) => a.at - b.at || a.delta - b.delta);
      let current = 0;
      let peak = 0;
      for (const p of points) {
        current += p.delta;
        peak = Math.max(peak, current);
      }
      assert.ok(peak <= 4, `at most 4 handlers ran at once, saw ${peak}`);
    });

    test('T6 four claim processes racing over 20 pending tasks take exactly the database cap; set-capacity admits more, validated', async () => {
      const { fx, tasks } = await fresh();
      for (let i = 0; i < 20; i += 1) await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: { i }, timeoutMs: 60_000 });
      claimers.push(...[0, 1, 2, 3].map(() => new StoreChild(fx)));
      await Promise.all(claimers.map((c) => c.send('ping')));
      type Claim = { taskId: number } | null;
      const perChild = await Promise.all(claimers.map((c, i) => c.send<Claim[]>('claim', { workerId: `claimer-${i}`, leaseMs: 60_000, times: 6 })));
      const claims = perChild.flat().filter((c) => c !== null);
      assert.equal(claims.length, 4, `the default database cap is 4 (claimed ${claims.length})`);
      assert.equal(await running(fx), 4);

      // The CLI changes the cap; invalid values are refused with one line and exit 2, nothing changed.
      for (const bad of ['0', '10001', '2.5', 'many']) {
        const r = await runCli(fx, ['tasks', 'set-capacity', bad]);
        assert.equal(r.code, 2, `set-capacity ${bad}: ${r.stderr}`);
        assert.match(r.stderr, /^apsup: set-capacity <n> must be an integer from 1 to 10000/);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      }
      await assert.rejects(tasks.setCapacity(0), InvalidArgumentError);
      const set = await runCli(fx, ['tasks', 'set-capacity', '6']);
      assert.equal(set.code, 0, set.stderr);
      assert.deepEqual(JSON.parse(set.stdout), { previousCapacity: 4, capacity: 6, running: 4 });
      const more = await Promise.all(claimers.map((c) => c.send<Claim[]>('claim', { leaseMs: 60_000, times: 3 })));
      assert.equal(more.flat().filter((c) => c !== null).length, 2, 'two more slots, taken once');
      assert.equal(await running(fx), 6);
      // Lowering below the running count stops claims; nothing running is touched.
      assert.deepEqual(await tasks.setCapacity(3), { previousCapacity: 6, capacity: 3, running: 6 });
      assert.equal(await tasks.claim('late', 60_000, TEST_TASK_TYPES), null);
      assert.equal(await tasks.hasPending(TEST_TASK_TYPES), false, 'the probe reports nothing claimable at the cap');
      assert.equal(await running(fx), 6);
    });

    test('T6 claimBatch takes at most the room under the database cap, oldest first, each attempt with its own token', async () => {
      const { fx, tasks } = await fresh();
      const ids: number[] = [];
      for (let i = 0; i < 10; i += 1) ids.push((await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: { i }, timeoutMs: 60_000 })).taskId);
      const first = await tasks.claimBatch('batcher', 60_000, TEST_TASK_TYPES, 3);
      assert.deepEqual(
        first.map((t) => t.taskId),
        ids.slice(0, 3),
        'the three oldest',
      );
      const second = await tasks.claimBatch('batcher', 60_000, TEST_TASK_TYPES, 10);
      assert.deepEqual(
        second.map((t) => t.taskId),
        ids.slice(3, 4),
        'one slot left under the cap of 4, though 10 were asked for',
      );
      const all = [...first, ...second];
      assert.equal(new Set(all.map((t) => t.attemptToken)).size, 4, 'four distinct attempt tokens');
      for (const t of all) {
        assert.deepEqual([t.attemptCount, t.attemptOwner], [1, 'batcher']);
        assert.ok(t.leaseExpiresAt.getTime() - t.dbNow.getTime() >= 59_000, 'a lease from the database clock');
        const row = await tasks.read(t.taskId);
        assert.deepEqual([row?.state, row?.attemptToken], ['running', t.attemptToken]);
      }
      assert.deepEqual(await tasks.claimBatch('batcher', 60_000, TEST_TASK_TYPES, 5), [], 'at the cap: nothing');
      assert.equal(await running(fx), 4);
      await tasks.setCapacity(6);
      assert.equal((await tasks.claimBatch('batcher', 60_000, ['fx-sleep'], 5)).length, 0, 'a type with nothing pending: nothing');
      assert.deepEqual(
        (await tasks.claimBatch('batcher', 60_000, TEST_TASK_TYPES, 5)).map((t) => t.taskId),
        ids.slice(4, 6),
      );
      for (const bad of [0, 101, 1.5]) await assert.rejects(tasks.claimBatch('batcher', 60_000, TEST_TASK_TYPES, bad), InvalidArgumentError);
      // The SQL refuses a count out of range on its own, whatever the caller.
      await assert.rejects(
        (fx.store as BaseStore).callOperation('pc_task_claim_batch', { worker_id: 'w', lease_ms: 60_000, task_types: 'fx-quick', max_count: 101 } as never),
        (e: Error & { code?: string }) => e.code === 'invalid_argument' || /invalid_argument/.test(e.message),
      );
    });

    test('claimBatch returns every claimed task whatever the id distance between them (a requeued old task with new ones)', async () => {
      const { fx, tasks } = await fresh();
      const input = (i: number) => ({ taskType: 'fx-quick', handlerVersion: 2, payload: { i }, timeoutMs: 60_000 });
      const ids = (await tasks.submitBatch(Array.from({ length: 1000 }, (_, i) => input(i)))).map((r) => r.taskId);
      ids.push(...(await tasks.submitBatch(Array.from({ length: 200 }, (_, i) => input(1000 + i)))).map((r) => r.taskId));
      // The test ends the tasks between the first, the 5th and the last three by hand: claimable
      // ids with a near gap (4) and a far one (over 1000) that the claim must read back.
      const keep = [ids[0], ids[5], ...ids.slice(-3)];
      await fx.query(`UPDATE pc_durable_tasks SET state = 'cancelled' WHERE task_id NOT IN (${keep.join(',')})`);
      await tasks.setCapacity(10);
      const claimed = await tasks.claimBatch('batcher', 60_000, TEST_TASK_TYPES, 5);
      assert.deepEqual(
        claimed.map((t) => t.taskId),
        keep,
      );
      assert.equal(new Set(claimed.map((t) => t.attemptToken)).size, 5);
      for (const t of claimed) assert.equal((await tasks.read(t.taskId))?.attemptToken, t.attemptToken);
      const near = await tasks.claimBatch('batcher', 60_000, TEST_TASK_TYPES, 5);
      assert.deepEqual(near, [], 'nothing else was pending');
    });

    test('T6 four processes racing claimBatch (3 each) over 20 pending tasks take exactly the database cap; maintenance claims nothing', async () => {
      const { fx, tasks } = await fresh();
      for (let i = 0; i < 20; i += 1) await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: { i }, timeoutMs: 60_000 });
      claimers.push(...[0, 1, 2, 3].map(() => new StoreChild(fx)));
      await Promise.all(claimers.map((c) => c.send('ping')));
      type Claim = { taskId: number; attemptToken: string };
      for (let round = 0; round < 3; round += 1) {
        const perChild = await Promise.all(claimers.map((c, i) => c.send<Claim[]>('claimBatch', { workerId: `batcher-${i}`, leaseMs: 60_000, maxCount: 3 })));
        const claims = perChild.flat();
        if (round === 0) assert.equal(claims.length, 4, `the database cap is 4 (claimed ${claims.length})`);
        else assert.equal(claims.length, 0, 'nothing more at the cap');
        assert.equal(new Set(claims.map((c) => c.taskId)).size, claims.length, 'no task claimed twice');
        assert.equal(await running(fx), 4);
      }
      await tasks.setCapacity(10);
      await fx.store.setMaintenance(true);
      const paused = await Promise.all(claimers.map((c) => c.send<Claim[]>('claimBatch', { leaseMs: 60_000, maxCount: 3 })));
      assert.equal(paused.flat().length, 0, 'nothing is claimed during maintenance');
      await fx.store.setMaintenance(false);
      const more = await Promise.all(claimers.map((c) => c.send<Claim[]>('claimBatch', { leaseMs: 60_000, maxCount: 3 })));
      assert.equal(more.flat().length, 6, 'six more slots after the window, taken once');
      assert.equal(await running(fx), 10);
    });

    test('a worker with an older registry leaves a newer task type pending; a worker that knows it runs it (rolling deploy)', async () => {
      const { fx, tasks } = await fresh();
      const newer = (await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 })).taskId;
      const known = (await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: { ms: 10 }, timeoutMs: 60_000 })).taskId;
      const older = startCli(fx, ['tasks', 'worker'], { POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: OLDER_TASKS_MODULE, SWEEP_SECONDS: '3600' });
      workers.push(older);
      assert.equal((await waitForTask(tasks, known, isTerminal, 30_000)).state, 'succeeded', older.output());
      // The claim that took the later fx-sleep task passed over the older fx-quick one.
      const p = await tasks.read(newer);
      assert.deepEqual([p?.state, p?.attemptCount, p?.attemptOwner, p?.errorCode], ['pending', 0, null, null], older.output());
      assert.equal(await tasks.hasPending(['fx-sleep']), false, 'nothing claimable for the older registry');
      assert.equal(await tasks.hasPending(['fx-quick']), true);
      await stopChild(older);
      const current = startCli(fx, ['tasks', 'worker'], { POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: FIXTURE_TASKS_MODULE, SWEEP_SECONDS: '3600' });
      workers.push(current);
      const done = await waitForTask(tasks, newer, isTerminal, 30_000);
      assert.deepEqual([done.state, done.attemptCount, done.attemptOwner], ['succeeded', 1, null], current.output());
    });

    test('the reconciler of an older registry leaves a lost attempt of a newer type to a worker that has its failure hook', async () => {
      const { fx, tasks } = await fresh();
      const newer = (await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 })).taskId;
      // A newer worker claimed it and vanished: its lease expires.
      const ghost = new TaskStore(fx.openStore() as BaseStore);
      assert.equal((await ghost.claim('newer-worker', 1000, ['fx-quick']))?.taskId, newer);
      await waitLeaseExpired(tasks, newer);
      const older = await makeRunner(fx, { SWEEP_SECONDS: '3600' }, OLDER_TASKS_MODULE);
      runners.push(older.runner);
      await older.runner.start(); // its start-up sweep
      await older.runner.sweep();
      assert.deepEqual(await tasks.listLost(10, ['fx-sleep']), []);
      const still = await tasks.read(newer);
      assert.deepEqual([still?.state, still?.errorCode], ['running', null], 'not failed by a worker without its hook');
      const current = await makeRunner(fx, { SWEEP_SECONDS: '3600' });
      runners.push(current.runner);
      await current.runner.start();
      const done = await waitForTask(tasks, newer, isTerminal);
      assert.deepEqual([done.state, done.errorCode], ['failed', 'lost']);
    });
  });
}
