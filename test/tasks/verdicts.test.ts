// Verdicts of durable tasks on both backends (issue 16 "Verdicts", issue 17 item 4): the verdict the
// runner reached (timeout, shutdown) is the one recorded whatever the lease did meanwhile, a
// cancelled running task never ends succeeded, a failure hook that cannot be imported or that
// hangs never lets the attempt reach a terminal state without it, and it is bounded in time.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, afterEach, describe, test } from 'node:test';
import { txQuery } from '../../src/store/tx-query.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import type { TaskRunner } from '../../src/tasks/task-runner.ts';
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
  settledWithin,
  tempDir,
  waitForTask,
  waitLeaseExpired,
  type RunnerKit,
} from './harness.ts';

const running = async (fx: BackendFixture) => Number((await fx.query("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE state = 'running'"))[0].n);

for (const backend of BACKENDS) {
  describe(`durable task verdicts (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    const runners: TaskRunner[] = [];
    async function setup(overrides: Record<string, string> = {}, fx?: BackendFixture, clock?: ManualClock): Promise<RunnerKit & { fx: BackendFixture }> {
      if (!fx) {
        fx = await createBackend(backend);
        fixtures.push(fx);
        await createFixtureTables(fx);
      }
      const kit = await makeRunner(fx, { SWEEP_SECONDS: '3600', ...overrides }, undefined, { clock });
      runners.push(kit.runner);
      return { ...kit, fx };
    }
    afterEach(async () => {
      for (const r of runners.splice(0)) await r.stop();
      killChildren();
    });
    after(async () => {
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });

    test('verdict 1: a timeout whose lease expired during the grace period ends timeout, is never retried, and frees its slot at once', async () => {
      // The scenario: a handler blocking its event loop, timeout 3 s, lease 2 s, grace 4 s;
      // the host's timers on a clock the test drives, the lease on the database's.
      const clock = new ManualClock();
      const { fx, tasks, service, runner } = await setup({ LEASE_SECONDS: '2', TERMINATE_GRACE_SECONDS: '4' }, undefined, clock);
      await runner.start();
      // Each row is bound to its task at submit, so the hook has it to converge even if a slow
      // child start-up lets the timeout fire before the handler ran.
      const bound = (taskType: string, rowId: string) =>
        tasks.transaction(async (tx) => {
          const r = await service.submit({ taskType, payload: { rowId }, timeoutMs: 3000 }, tx);
          await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES (?, 'indexing', ?)", [rowId, r.taskId]);
          return r;
        });
      const plain = await bound('fx-busy', 'to-plain');
      const idem = await bound('fx-busy-idem', 'to-idem');
      runner.notify();
      for (const id of [plain.taskId, idem.taskId]) await waitFor(async () => (await events(fx, id)).some((e) => e.event === 'start'), 30_000);
      await clock.advance(3000); // the timeouts: verdicts recorded, SIGTERM (ignored: the loops are blocked)
      for (const id of [plain.taskId, idem.taskId]) {
        await waitLeaseExpired(tasks, id, 20_000);
        assert.equal((await tasks.read(id))?.state, 'running', 'still running inside the grace period');
      }
      await clock.advance(4000); // the grace period ends: SIGKILL
      for (const [id, row] of [
        [plain.taskId, 'to-plain'],
        [idem.taskId, 'to-idem'],
      ] as const) {
        const t = await waitForTask(tasks, id, isTerminal, 30_000);
        assert.deepEqual([t.state, t.errorCode, t.attemptCount, t.attemptOwner], ['failed', 'timeout', 1, null], `task ${id}: ${t.errorMessage}`);
        assert.equal(await rowState(fx, row), 'error', 'the failure hook ran in the terminal transaction');
        assert.deepEqual(
          (await events(fx, id)).filter((e) => e.attempt !== 1),
          [],
          'never run again',
        );
      }
      for (const e of await events(fx)) assert.equal(isAlive(e.pid), false);
      assert.equal(await running(fx), 0, 'no cap slot stays taken');
      await waitFor(() => runner.runningCount === 0, 5000);
    });

    test('verdict 1: a second runner sweeping during the grace period records the timeout verdict, not lost, and does not requeue', async () => {
      const clock = new ManualClock(); // this runner's timers; the sweeper's are real
      const { fx, tasks, service, runner } = await setup({ LEASE_SECONDS: '2', TERMINATE_GRACE_SECONDS: '6' }, undefined, clock);
      await runner.start();
      // Heartbeats until the timeout's stop reaches it, then blocks: the lease expires inside the
      // grace period (never ended here: the test's clock does not reach it), while the other
      // runner, started once this one runs the attempt, sweeps every 200 ms.
      const r = await service.submit({ taskType: 'fx-busy-idem', payload: { rowId: 'sw-row', busyOnAbort: true }, timeoutMs: 4000 });
      await insertRow(fx, 'sw-row');
      await waitFor(async () => (await events(fx, r.taskId)).some((e) => e.event === 'start'), 30_000);
      const sweeper = await setup({ SWEEP_SECONDS: '0.2' }, fx);
      await sweeper.runner.start();
      await clock.advance(4000);
      const t = await waitForTask(tasks, r.taskId, isTerminal, 30_000);
      assert.deepEqual([t.state, t.errorCode, t.attemptCount], ['failed', 'timeout', 1], t.errorMessage ?? '');
      assert.deepEqual(
        (await events(fx, r.taskId)).filter((e) => e.attempt !== 1),
        [],
        'not requeued',
      );
      await clock.advance(6000); // this runner's grace period ends: SIGKILL of the blocked process
      await waitFor(() => runner.runningCount === 0, 10_000);
    });

    test('verdict 2: a running task whose cancel was recorded never ends succeeded, with or without control points', async () => {
      const { fx, tasks, service, runner } = await setup({ LEASE_SECONDS: '2' });
      await insertRow(fx, 'c-deaf');
      await insertRow(fx, 'c-return');
      await runner.start();
      // No control point at all: it finishes its work (a plain sleep) without ever seeing the cancel.
      const deaf = await service.submit({ taskType: 'fx-hang', payload: { rowId: 'c-deaf', sleepMs: 2500 } });
      // Sees the cancel through ctx.signal and returns normally.
      const ret = await service.submit({ taskType: 'fx-hang', payload: { rowId: 'c-return', sleepMs: 600_000, honorSignal: true, returnOnAbort: true } });
      for (const id of [deaf.taskId, ret.taskId]) {
        await waitFor(async () => (await events(fx, id)).some((e) => e.event === 'start') && (await tasks.read(id))?.state === 'running', 20_000);
        assert.equal((await tasks.cancel(id)).outcome, 'cancel_requested');
      }
      for (const [id, row] of [
        [deaf.taskId, 'c-deaf'],
        [ret.taskId, 'c-return'],
      ] as const) {
        const t = await waitForTask(tasks, id, isTerminal, 20_000);
        assert.deepEqual([t.state, t.errorCode, t.result], ['cancelled', 'cancelled', null], `task ${id}`);
        assert.equal(await rowState(fx, row), 'error', 'the failure hook converged what still belonged to the task');
      }
      assert.ok(
        (await events(fx, deaf.taskId)).some((e) => e.event === 'end'),
        'the deaf handler had finished its work',
      );
    });

    test('verdict 2: a success that committed before the cancel stands (the cancel answers already_terminal)', async () => {
      const { tasks, service, runner } = await setup();
      await runner.start();
      const r = await service.submit({ taskType: 'fx-quick', payload: {} });
      assert.equal((await waitForTask(tasks, r.taskId, isTerminal)).state, 'succeeded');
      assert.deepEqual(await tasks.cancel(r.taskId), { state: 'succeeded', outcome: 'already_terminal' });
      assert.equal((await tasks.read(r.taskId))?.state, 'succeeded');
    });

    test('verdict 3: a failure hook that cannot be imported keeps the attempt converging (bounded), is retried, and then runs', async () => {
      const block = `${tempDir('apsup-hook-import')}/block`;
      fs.writeFileSync(block, '');
      process.env.FX_HOOK_IMPORT_BLOCK_FILE = block;
      process.env.FX_HOOK_IMPORT_FAIL_PID = String(process.pid);
      try {
        const { fx, tasks, service, runner } = await setup({ FAILURE_HOOK_MAX_ATTEMPTS: '5' });
        await insertRow(fx, 'imp-row');
        const errors: string[] = [];
        const log = (runner as unknown as { logger: { error: (o: unknown, m: string) => void } }).logger;
        const original = log.error.bind(log);
        log.error = (o: unknown, m: string) => {
          errors.push(m);
          original(o, m);
        };
        await runner.start();
        // The worker child dies after binding its row: the runner converges it with the hook.
        const r = await service.submit({ taskType: 'fx-hook-import', payload: { rowId: 'imp-row', crashBelowAttempt: 99 } });
        await waitFor(() => errors.length >= 1, 20_000);
        const t = await tasks.read(r.taskId);
        assert.equal(t?.state, 'running', `not terminal without its hook (${t?.state} ${t?.errorCode})`);
        assert.equal(await rowState(fx, 'imp-row'), 'indexing');
        assert.match(errors[0], /failure hook/);
        fs.rmSync(block);
        await runner.sweep();
        const done = await waitForTask(tasks, r.taskId, isTerminal, 20_000);
        assert.deepEqual([done.state, done.errorCode], ['failed', 'worker_exited']);
        assert.equal(await rowState(fx, 'imp-row'), 'error', 'the import was retried and the hook ran');
      } finally {
        delete process.env.FX_HOOK_IMPORT_BLOCK_FILE;
        delete process.env.FX_HOOK_IMPORT_FAIL_PID;
      }
    });

    test('verdict 3: a handler module the worker child cannot import: no terminal state without the hook; the runner converges it once the hook imports', async () => {
      const block = `${tempDir('apsup-load')}/block`;
      fs.writeFileSync(block, '');
      process.env.FX_HOOK_IMPORT_BLOCK_FILE = block;
      process.env.FX_HOOK_IMPORT_FAIL_PID = 'all'; // inherited by the worker children
      try {
        const { fx, tasks, service, runner } = await setup({ FAILURE_HOOK_MAX_ATTEMPTS: '5' });
        // Bound to its task by an earlier attempt (the upgrade path, a requeue): the hook must converge it.
        const { taskId } = await tasks.transaction(async (tx) => {
          const r = await service.submit({ taskType: 'fx-hook-import', payload: { rowId: 'load-row' } }, tx);
          await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES ('load-row', 'indexing', ?)", [r.taskId]);
          return r;
        });
        await runner.start();
        runner.notify();
        await waitFor(() => runner.runningCount === 0 && runner.completed === 0 && runner.stats.claims.size > 0, 20_000);
        await waitFor(async () => (await tasks.read(taskId))?.state === 'running' && runner.runningCount === 0, 20_000);
        assert.equal(await rowState(fx, 'load-row'), 'indexing');
        fs.rmSync(block);
        await runner.sweep();
        const t = await waitForTask(tasks, taskId, isTerminal, 20_000);
        assert.deepEqual([t.state, t.errorCode, t.attemptCount], ['failed', 'handler_load_failed', 1]);
        assert.equal(await rowState(fx, 'load-row'), 'error', 'the hook ran in the terminal transaction');
      } finally {
        delete process.env.FX_HOOK_IMPORT_BLOCK_FILE;
        delete process.env.FX_HOOK_IMPORT_FAIL_PID;
      }
    });

    test("issue 17 item 4: a hanging failure hook is bounded: its convergence is rolled back, the host's database work goes on, and it is retried later", async () => {
      const dir = tempDir('apsup-hook-hang');
      const hang = `${dir}/hang`;
      fs.writeFileSync(hang, '');
      const { fx, tasks, service, runner } = await setup({ FAILURE_HOOK_TIMEOUT_SECONDS: '1', FAILURE_HOOK_MAX_ATTEMPTS: '5' });
      const { taskId } = await tasks.transaction(async (tx) => {
        const s = await service.submit({ taskType: 'fx-sleep', payload: { rowId: 'hang-row', hookHangFile: hang, crashBelowAttempt: 99 } }, tx);
        await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES ('hang-row', 'uploaded', ?)", [s.taskId]);
        return s;
      });
      await runner.start();
      runner.notify();
      await waitFor(async () => (await events(fx, taskId)).some((e) => e.event === 'start'), 20_000);
      // While the hook hangs, the host's own database work (same store, on SQLite the same connection) is served.
      await waitFor(async () => (await rowState(fx, 'hang-row')) === 'indexing', 20_000);
      const started = Date.now();
      const work = await settledWithin(
        waitFor(
          async () => {
            await tasks.publishReadiness('tasks:probe', 5000);
            return Date.now() - started > 2500;
          },
          20_000,
          100,
        ),
        15_000,
      );
      assert.equal(work.settled, true, 'the host store kept answering while the hook hung');
      const t = await tasks.read(taskId);
      assert.equal(t?.state, 'running', 'the bounded convergence was rolled back');
      assert.equal(await rowState(fx, 'hang-row'), 'indexing', "the hook's write was rolled back");
      fs.rmSync(hang);
      await runner.sweep();
      const done = await waitForTask(tasks, taskId, isTerminal, 20_000);
      assert.deepEqual([done.state, done.errorCode], ['failed', 'worker_exited']);
      assert.equal(await rowState(fx, 'hang-row'), 'error');
      const err = String((await fx.query("SELECT error FROM ref_files WHERE file_id = 'hang-row'"))[0].error);
      assert.equal(err, 'fixture task failed', 'no write of an abandoned hook landed after its bound');
    });
  });
}
