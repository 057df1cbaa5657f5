// Durable tasks across real processes on both backends: a submitting process that exits before
// any worker runs and a worker process that completes the task later (T1), the claim cap across
// two worker processes and relay without the periodic sweep (T6), and a worker process killed
// with SIGKILL whose attempts are reconciled by another runner (T8).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  FIXTURE_TASKS_MODULE,
  createFixtureTables,
  events,
  insertRow,
  isAlive,
  isTerminal,
  makeRunner,
  rowState,
  runCli,
  startCli,
  stopChild,
  tempDir,
  waitForTask,
  processTestHooks,
} from './harness.ts';

for (const backend of BACKENDS) {
  describe(`durable tasks across processes (${backend})`, () => {
    const orphanPids: number[] = [];
    const { fixtures, workers, runners } = processTestHooks(() => {
      for (const pid of orphanPids.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    });
    async function fresh(): Promise<{ fx: BackendFixture; tasks: TaskStore }> {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      await createFixtureTables(fx);
      return { fx, tasks: new TaskStore(fx.store as BaseStore) };
    }

    test('T1 a task submitted by a process that exits before any worker runs is completed later by a worker process', async () => {
      const { fx, tasks } = await fresh();
      const submit = await runCli(fx, ['tasks', 'submit', 'index-file', '--payload', JSON.stringify({ fileId: 'cli-file', chunks: 3 })]);
      assert.equal(submit.code, 0, submit.stderr);
      const submitted = JSON.parse(submit.stdout) as { taskId: number; outcome: string; dedupeKey: string };
      assert.equal(submitted.outcome, 'created');
      assert.equal(submitted.dedupeKey, 'index-file:cli-file');
      const pending = await tasks.read(submitted.taskId);
      assert.deepEqual([pending?.state, pending?.attemptCount, pending?.attemptOwner], ['pending', 0, null]);
      assert.equal(await rowState(fx, 'cli-file'), 'uploaded', 'the file row is linked with the intent, not started');

      // A one-hour sweep: the worker's start-up pickup runs it (its wake-up was lost with the submitter).
      const worker = startCli(fx, ['tasks', 'worker'], { SWEEP_SECONDS: '3600', LEASE_SECONDS: '5' });
      workers.push(worker);
      const done = await waitForTask(tasks, submitted.taskId, isTerminal, 30_000);
      assert.equal(done.state, 'succeeded', worker.output());
      assert.equal(done.attemptCount, 1);
      assert.equal(done.attemptOwner, null);
      assert.equal(done.leaseExpiresAt, null);
      assert.deepEqual(done.result, { fileId: 'cli-file', chunks: 3 });
      assert.deepEqual([done.progressCurrent, done.progressTotal, done.progressMessage], [3, 3, 'all chunks indexed']);
      assert.equal(await rowState(fx, 'cli-file'), 'indexed');
      // Submitted by another process while the worker runs idle: runnable at commit (the SQLite
      // commit watch, the MySQL probe), not at the next sweep an hour later.
      const second = await runCli(fx, ['tasks', 'submit', 'index-file', '--payload', JSON.stringify({ fileId: 'cli-file-2', chunks: 1 })]);
      assert.equal(second.code, 0, second.stderr);
      const s2 = await waitForTask(tasks, (JSON.parse(second.stdout) as { taskId: number }).taskId, isTerminal, 30_000);
      assert.deepEqual([s2.state, s2.attemptCount], ['succeeded', 1], worker.output());
      const exit = await stopChild(worker);
      assert.equal(exit.code, 0, worker.output());
    });

    test('T6 the claim cap holds across two worker processes, and a finishing task relays the next without the periodic sweep', async () => {
      const { fx, tasks } = await fresh();
      const ids: number[] = [];
      for (let i = 0; i < 5; i += 1)
        ids.push((await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: { ms: 600 }, timeoutMs: 60_000 })).taskId);
      // The cap is the database's; each process may run more on its own.
      assert.equal((await runCli(fx, ['tasks', 'set-capacity', '2'])).code, 0);
      const env = { POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: FIXTURE_TASKS_MODULE, SWEEP_SECONDS: '3600' };
      workers.push(startCli(fx, ['tasks', 'worker'], { ...env, CAPACITY: '2' }), startCli(fx, ['tasks', 'worker'], { ...env, CAPACITY: '3' }));
      let maxRunning = 0;
      await waitFor(
        async () => {
          const running = Number((await fx.query("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE state = 'running'"))[0].n);
          maxRunning = Math.max(maxRunning, running);
          const finished = Number((await fx.query("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE state IN ('succeeded', 'failed', 'cancelled')"))[0].n);
          return finished === ids.length;
        },
        60_000,
        20,
      );
      assert.ok(maxRunning <= 2, `at most 2 running at once, saw ${maxRunning}`);
      const rows = await Promise.all(ids.map((id) => tasks.read(id)));
      for (const r of rows) assert.equal(r?.state, 'succeeded');
      // Handler-side intervals: never more than the cap at once, and the cap was used.
      const ev = await events(fx);
      const points = ev
        .filter((e) => e.event === 'start' || e.event === 'end')
        .map((e) => ({ at: e.atMs, delta: e.event === 'start' ? 1 : -1 }))
        .sort((a, b) => a.at - b.at || a.delta - b.delta);
      let current = 0;
      let peak = 0;
      for (const p of points) {
        current += p.delta;
        peak = Math.max(peak, current);
      }
      assert.equal(peak, 2, 'two tasks ran concurrently, never more');
      // Relay: with a one-hour sweep, every task after the first claims started right after an earlier one finished.
      const byStart = [...rows].sort((a, b) => a!.startedAt!.getTime() - b!.startedAt!.getTime());
      for (const t of byStart.slice(2)) {
        const gaps = rows
          .filter((o) => o!.finishedAt && o!.finishedAt.getTime() <= t!.startedAt!.getTime())
          .map((o) => t!.startedAt!.getTime() - o!.finishedAt!.getTime());
        assert.ok(gaps.length > 0 && Math.min(...gaps) < 3000, `task ${t!.taskId} was claimed ${Math.min(...gaps)} ms after a task finished`);
      }
      // Attempts run in warm worker children (reused after a clean end), never in the worker host.
      const owners = new Set((await fx.query('SELECT DISTINCT pid FROM fx_task_events')).map((r) => Number(r.pid)));
      assert.ok(owners.size >= 2 && owners.size <= 5, `attempts ran in ${owners.size} worker children`);
      for (const w of workers) assert.ok(!owners.has(w.child.pid!), 'not in the worker host process');
    });

    test('T8 a SIGKILLed worker process: its attempts expire and another runner fails them with the hook, or requeues an idempotent type', async () => {
      const { fx, tasks } = await fresh();
      const never = `${tempDir('apsup-never')}/never`;
      await insertRow(fx, 'kill-plain');
      await insertRow(fx, 'kill-idem');
      const plain = (await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: { rowId: 'kill-plain', untilFile: never }, timeoutMs: 600_000 }))
        .taskId;
      const idem = (await tasks.submit({ taskType: 'fx-idempotent', handlerVersion: 1, payload: { rowId: 'kill-idem', untilAttempt: 2 }, timeoutMs: 600_000 }))
        .taskId;
      const worker = startCli(fx, ['tasks', 'worker'], {
        POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: FIXTURE_TASKS_MODULE,
        LEASE_SECONDS: '3',
        SWEEP_SECONDS: '3600',
      });
      workers.push(worker);
      const started = (await waitFor(async () => {
        const ev = (await events(fx)).filter((e) => e.event === 'start');
        return ev.length === 2 && (await rowState(fx, 'kill-plain')) === 'indexing' && (await rowState(fx, 'kill-idem')) === 'indexing' ? ev : null;
      }, 30_000))!;
      orphanPids.push(...started.map((e) => e.pid));
      const owner = (await tasks.read(plain))?.attemptOwner;
      assert.match(owner ?? '', /^tasks:/);
      worker.child.kill('SIGKILL');
      await worker.exited;
      // The attempt children notice the lost parent and exit; their attempts stay 'running' until the lease expires.
      for (const e of started) await waitFor(() => !isAlive(e.pid), 10_000);
      assert.equal((await tasks.read(plain))?.state, 'running');

      const { runner } = await makeRunner(fx, { SWEEP_SECONDS: '0.5' });
      runners.push(runner);
      await runner.start();
      const p = await waitForTask(tasks, plain, isTerminal, 30_000);
      assert.deepEqual([p.state, p.errorCode, p.attemptCount], ['failed', 'lost', 1]);
      assert.equal(await rowState(fx, 'kill-plain'), 'error', 'the failure hook converged the row in the terminal transaction');
      const i = await waitForTask(tasks, idem, isTerminal, 30_000);
      assert.deepEqual([i.state, i.attemptCount], ['succeeded', 2]);
      assert.equal(await rowState(fx, 'kill-idem'), 'indexed');
    });
  });
}
