// The runner commits the successes its worker processes report (handlers without ctx.onComplete
// writes) in groups (pc_task_succeed_batch), on both backends. Attacks on the time between the
// handler's return and that commit: a cancel recorded meanwhile, a lease that runs out and an
// attempt another runner's sweep requeued meanwhile. Neither may end as the stale success, and
// the process of a refused success is never reused. The claims that take the successes' places
// share their transaction; a stop waits for a batch in flight and stops what it claimed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, afterEach, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import type { TaskRunner } from '../../src/tasks/task-runner.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  createFixtureTables,
  events,
  insertRow,
  isAlive,
  isTerminal,
  killChildren,
  makeRunner,
  rowState,
  tempDir,
  waitForTask,
  waitLeaseExpired,
  type RunnerKit,
} from './harness.ts';

for (const backend of BACKENDS) {
  describe(`durable task successes committed by the runner (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    const runners: TaskRunner[] = [];
    async function setupAgain(fx: BackendFixture): Promise<RunnerKit> {
      const kit = await makeRunner(fx, { SWEEP_SECONDS: '3600', TERMINATE_GRACE_SECONDS: '2', CAPACITY: '2', WARM_WORKERS: '2' });
      runners.push(kit.runner);
      return kit;
    }
    async function setup(overrides: Record<string, string> = {}): Promise<RunnerKit & { fx: BackendFixture; other: TaskStore }> {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      await createFixtureTables(fx);
      const kit = await makeRunner(fx, { SWEEP_SECONDS: '3600', TERMINATE_GRACE_SECONDS: '2', ...overrides });
      runners.push(kit.runner);
      // Another process's view of the database (closed by fx.cleanup()).
      return { ...kit, fx, other: new TaskStore(fx.openStore() as BaseStore) };
    }
    afterEach(async () => {
      for (const r of runners.splice(0)) await r.stop();
      killChildren();
    });
    after(async () => {
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });

    test('a burst of successes is committed in groups by the runner, and the worker processes are reused', async () => {
      const { tasks, service, runner } = await setup({ CAPACITY: '4', WARM_WORKERS: '4' });
      await tasks.setCapacity(4);
      const ids: number[] = [];
      for (let i = 0; i < 24; i += 1) ids.push((await service.submit({ taskType: 'fx-quick', payload: { ms: i } })).taskId);
      // A first group commit of one success is held until two more successes wait: they form the
      // next group. (A first group of two or more is the grouping already; held, it would keep
      // the slots the waiting successes need: on a loaded host all four can arrive in one turn.)
      const sizes: number[] = [];
      runner.beforeSuccessCommit = async (items) => {
        sizes.push(items.length);
        if (sizes.length === 1 && items.length < 2) await waitFor(() => runner.successes.waitingCount >= 2, 20_000, 5);
      };
      await runner.start();
      for (const id of ids) {
        const t = await waitForTask(tasks, id, isTerminal);
        assert.deepEqual([t.state, t.result, t.attemptOwner], ['succeeded', { quick: true, version: 2, payload: { ms: ids.indexOf(id) } }, null]);
      }
      assert.equal(runner.successes.items, 24, 'every success went through the group commit');
      assert.ok(Math.max(...sizes) >= 2, `successes were grouped (group sizes ${sizes.join(',')})`);
      assert.equal(
        sizes.reduce((a, b) => a + b, 0),
        24,
      );
      assert.ok(runner.pool.reused > 0, 'processes went back to the pool after a committed success');
      assert.ok(runner.claimedWithSuccesses > 0, 'the next tasks were claimed in the transactions of the successes');
    });

    test('a cancel recorded after the handler returned and before the commit ends the task cancelled with its failure hook', async () => {
      const { fx, tasks, service, runner, other } = await setup({ CAPACITY: '2', WARM_WORKERS: '2' });
      await tasks.setCapacity(2);
      await insertRow(fx, 'late-cancel');
      const hookStarted = `${tempDir('apsup-hook')}/started`;
      const r = await service.submit({ taskType: 'fx-sleep', payload: { rowId: 'late-cancel', hookStartedFile: hookStarted } });
      // Tasks waiting behind it: the refused success's slot is not free until its attempt ended.
      const behind: number[] = [];
      for (let i = 0; i < 4; i += 1) behind.push((await service.submit({ taskType: 'fx-quick', payload: { ms: i } })).taskId);
      const runningAtTake: number[] = [];
      const take = runner.pool.take.bind(runner.pool);
      runner.pool.take = () => {
        runningAtTake.push(runner.runningCount);
        return take();
      };
      let held = 0;
      runner.beforeSuccessCommit = async (items) => {
        if (!items.some((i) => i.taskId === r.taskId)) return;
        held += 1;
        assert.equal((await other.cancel(r.taskId)).outcome, 'cancel_requested');
      };
      await runner.start();
      const done = await waitForTask(tasks, r.taskId, isTerminal);
      for (const id of behind) assert.equal((await waitForTask(tasks, id, isTerminal)).state, 'succeeded');
      assert.ok(Math.max(...runningAtTake) < 2, `never more attempts than CAPACITY 2 (running at each start: ${runningAtTake.join(',')})`);
      assert.equal(held, 1);
      assert.deepEqual([done.state, done.errorCode, done.result, done.attemptOwner], ['cancelled', 'cancelled', null, null], 'never the stale success');
      assert.ok(fs.existsSync(hookStarted), 'the failure hook ran in the terminal transaction');
      const ev = await events(fx, r.taskId);
      assert.deepEqual(
        ev.map((e) => e.event),
        ['start', 'cleanup', 'end'],
        'the handler had returned',
      );
      const pid = ev[0]!.pid;
      await waitFor(() => !isAlive(pid), 10_000, 20);
      assert.ok(!runner.pool.pids().includes(pid), 'the process of a refused success is not reused');
    });

    test('a success held past its lease, while another runner requeued the attempt, is refused; the next attempt succeeds in another process', async () => {
      const { fx, tasks, service, runner, other } = await setup({ LEASE_SECONDS: '1' });
      await insertRow(fx, 'held-success');
      const r = await service.submit({ taskType: 'fx-idempotent', payload: { rowId: 'held-success' } });
      let held = 0;
      runner.beforeSuccessCommit = async (items) => {
        const mine = items.find((i) => i.taskId === r.taskId);
        if (!mine || held > 0) return;
        held += 1;
        await waitLeaseExpired(other, r.taskId);
        // Another runner's sweep finds the attempt lost and requeues it (idempotent type).
        assert.equal(await other.expireLost(r.taskId, mine.attemptToken, true, undefined, { maxAttempts: 5 }), 'requeued');
      };
      await runner.start();
      const done = await waitForTask(tasks, r.taskId, (t) => isTerminal(t) && t.attemptCount === 2);
      assert.equal(held, 1);
      assert.deepEqual([done.state, done.result], ['succeeded', { ok: true, attempt: 2 }], 'the stale attempt never wrote its success');
      assert.equal(await rowState(fx, 'held-success'), 'indexed');
      const starts = (await events(fx, r.taskId)).filter((e) => e.event === 'start');
      assert.deepEqual(
        starts.map((e) => e.attempt),
        [1, 2],
      );
      assert.notEqual(starts[0]!.pid, starts[1]!.pid, 'the process whose success was refused ran nothing more');
    });

    test('a stop during a group commit waits for it: the held successes are recorded and no claimed task is left running', async () => {
      const { fx, tasks, service, runner, warnings } = await setup({ CAPACITY: '2', WARM_WORKERS: '2' });
      await tasks.setCapacity(2);
      const ids: number[] = [];
      for (let i = 0; i < 8; i += 1) ids.push((await service.submit({ taskType: 'fx-quick', payload: { ms: i } })).taskId);
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      let stopping: Promise<void> | null = null;
      let held: number[] = [];
      runner.beforeSuccessCommit = async (items) => {
        if (stopping) return;
        held = items.map((i) => i.taskId);
        stopping = runner.stop();
        await gate;
      };
      await runner.start();
      await waitFor(() => stopping !== null, 20_000, 10);
      release();
      await stopping;
      for (const id of held) assert.equal((await tasks.read(id))?.state, 'succeeded', `held success of task ${id}`);
      const states = await fx.query('SELECT state, COUNT(*) AS n FROM pc_durable_tasks GROUP BY state ORDER BY state');
      assert.deepEqual(
        states.map((r) => String(r.state)).filter((st) => st !== 'succeeded'),
        ['pending'],
        `nothing claimed is left running after the stop, none failed: the claims of the held batch were given back (runner warnings: ${warnings.join(' | ') || 'none'})`,
      );
      const givenBack = await fx.query("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE state = 'pending' AND attempt_count > 0");
      assert.ok(Number(givenBack[0]!.n) > 0, 'the held batch claimed tasks, and they went back to pending');
      // The given-back claims are taken again by the next worker and run.
      const next = await setupAgain(fx);
      await next.runner.start();
      for (const id of ids) assert.equal((await waitForTask(tasks, id, isTerminal)).state, 'succeeded');
    });
  });
}
