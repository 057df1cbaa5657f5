// The durable task runner in this process (attempts run in real worker child processes) on both
// backends: a failed submit notification (T1), lazy and versioned handler loading (T3), a domain
// transaction that outlives the lease (T5), cancel of a running task (T7), lost attempts and the
// failure hook in the terminal transaction (T8), timeouts (T9), readiness, and explicit resume.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, afterEach, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { txQuery } from '../../src/store/tx-query.ts';
import { InvalidArgumentError } from '../../src/store/errors.ts';
import { setLongTimeout, type TaskRunner } from '../../src/tasks/task-runner.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  REFERENCE_TASKS_MODULE,
  REPO_ROOT,
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
import { TEST_TASK_TYPES } from '../fixtures/tasks/types.ts';
import type { Clock } from '../../src/runtime/clock.ts';
import { ManualClock } from '../../src/runtime/manual-clock.ts';

test('long timeouts do not overflow Node timers (they would fire at once)', async () => {
  let fired = false;
  const long = setLongTimeout(
    () => {
      fired = true;
    },
    30 * 24 * 3600 * 1000,
  );
  let shortFired = false;
  const short = setLongTimeout(() => {
    shortFired = true;
  }, 5);
  await waitFor(() => shortFired, 2000, 5);
  assert.equal(fired, false);
  long.clear();
  short.clear();
});

for (const backend of BACKENDS) {
  describe(`durable task runner (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    const runners: TaskRunner[] = [];
    async function setup(overrides: Record<string, string> = {}, tasksModule?: string, clock?: Clock): Promise<RunnerKit & { fx: BackendFixture }> {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      await createFixtureTables(fx);
      const kit = await makeRunner(fx, { SWEEP_SECONDS: '3600', TERMINATE_GRACE_SECONDS: '2', ...overrides }, tasksModule, { clock });
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

    /** A TaskStore on its own connection (another process's submissions, as the runner sees them); closed by fx.cleanup(). */
    function otherConnection(fx: BackendFixture): TaskStore {
      return new TaskStore(fx.openStore() as BaseStore); // closed by fx.cleanup()
    }

    test('T1 a submission is runnable at commit: the wake-up path claims it with a 3600 s sweep', async () => {
      const { fx, tasks, runner } = await setup({ WARM_WORKERS: '1' });
      await runner.start(); // the start-up pickup found nothing
      // A process that becomes ready claims too (the relay): wait for the warm one and for its
      // claim to have found nothing (on a loaded machine it can run after the submission below),
      // so that only a wake-up can deliver that submission.
      await waitFor(() => runner.pool.readyCount() >= 1 && runner.databaseWorkInFlight === 0, 30_000);
      const sweeps = runner.sweeps;
      // Committed by another connection (another process on SQLite: the commit watch; MySQL: the probe).
      const other = otherConnection(fx);
      const r = await other.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 });
      const done = await waitForTask(tasks, r.taskId, isTerminal);
      assert.deepEqual([done.state, done.attemptCount, done.attemptOwner], ['succeeded', 1, null]);
      assert.ok(runner.wakeups >= 1, 'a wake-up delivered it');
      assert.equal(runner.sweeps, sweeps, 'no sweep ran');
    });

    test('T1 a submission inside a caller transaction wakes the in-process runner after its commit', async () => {
      // The cross-process probe is slowed down so that only the after-commit notification can claim it in time.
      const { fx, tasks, service, runner } = await setup({ WAKEUP_POLL_MS: '60000' });
      await runner.start();
      let seenInside = -1;
      const r = await service.transaction(async (tx) => {
        const sub = await service.submit({ taskType: 'fx-sleep', payload: { rowId: 'tx-row' } }, tx);
        await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES ('tx-row', 'uploaded', ?)", [sub.taskId]);
        seenInside = runner.wakeups;
        return sub;
      });
      assert.equal(seenInside, 0, 'no wake-up before the commit');
      const done = await waitForTask(tasks, r.taskId, isTerminal);
      assert.deepEqual([done.state, done.attemptCount], ['succeeded', 1]);
      assert.equal(await rowState(fx, 'tx-row'), 'indexed');
      assert.ok(runner.wakeups >= 1);
    });

    test('T1 a failing submit notification still returns the committed task, which stays pending and then runs (lost wake-ups: start-up pickup, relay, sweep)', async () => {
      const { fx, tasks, service, runner } = await setup({ CAPACITY: '1' });
      runner.wakeupFault = () => true; // every wake-up (in-process, commit watch, probe) is lost
      const release = `${tempDir('apsup-relay')}/release`;
      // Start-up pickup: submitted before the runner runs, with a notification that throws.
      service.onSubmitted = () => {
        throw new Error('publication failed');
      };
      const first = await service.submit({ taskType: 'fx-sleep', payload: { untilFile: release } });
      assert.equal(first.outcome, 'created', 'the committed task is returned');
      runner.attach(service);
      assert.deepEqual([(await tasks.read(first.taskId))?.state, runner.wakeupsDropped], ['pending', 0]);
      await runner.start();
      await waitForTask(tasks, first.taskId, (t) => t.state === 'running');
      // Relay: capacity is full; the next task is claimed when the running one finishes.
      const second = await otherConnection(fx).submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 });
      assert.equal((await tasks.read(second.taskId))?.state, 'pending');
      fs.writeFileSync(release, '');
      assert.equal((await waitForTask(tasks, first.taskId, isTerminal)).state, 'succeeded');
      const s2 = await waitForTask(tasks, second.taskId, isTerminal);
      assert.deepEqual([s2.state, s2.attemptCount], ['succeeded', 1]);
      // Sweep: with free capacity, the real wake-up of a new submission is lost: it stays pending.
      await waitFor(() => runner.runningCount === 0, 10_000, 10); // else the relay claims it
      const dropped = runner.wakeupsDropped;
      const third = await otherConnection(fx).submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 });
      await waitFor(() => runner.wakeupsDropped > dropped, 20_000, 10);
      assert.equal((await tasks.read(third.taskId))?.state, 'pending', 'the lost wake-up left it pending');
      assert.equal(runner.wakeups, 0);
      await runner.sweep(); // what the SWEEP_SECONDS timer runs
      const s3 = await waitForTask(tasks, third.taskId, isTerminal);
      assert.deepEqual([s3.state, s3.attemptCount, s3.attemptOwner], ['succeeded', 1, null]);
    });

    test('T3 handler modules load lazily by task type, only in the worker child that runs the task', async () => {
      const markers = tempDir('apsup-lazy');
      process.env.FX_TASKS_MARKER_DIR = markers;
      try {
        const { tasks, service, runner, registry } = await setup();
        await runner.start();
        const quick = await service.submit({ taskType: 'fx-quick', payload: {} });
        assert.equal((await waitForTask(tasks, quick.taskId, isTerminal)).state, 'succeeded');
        const pending = await service.submit({ taskType: 'fx-lazy', payload: {}, dedupeKey: 'lazy' });
        assert.deepEqual(fs.readdirSync(markers), [], 'neither the registry, a submission nor another type imports the handler');
        assert.equal(registry.isLoaded('fx-lazy', 1), false);
        assert.equal((await waitForTask(tasks, pending.taskId, isTerminal)).state, 'succeeded');
        const files = fs.readdirSync(markers);
        assert.equal(files.length, 1, 'imported once, by the task that ran');
        assert.notEqual(files[0], `lazy-imported-${process.pid}`, 'imported by the worker child, not by the runner');
        assert.equal(registry.isLoaded('fx-lazy', 1), false);
      } finally {
        delete process.env.FX_TASKS_MARKER_DIR;
        fs.rmSync(markers, { recursive: true, force: true });
      }
    });

    test('T3 handler version 0 is legacy with its failure hook; unknown versions fail closed on the task; unknown types are not claimed', async () => {
      const { fx, tasks, service, runner } = await setup({}, REFERENCE_TASKS_MODULE);
      await insertRow(fx, 'legacy-file', 'indexing'); // left by the pre-version pipeline: no task or attempt owner
      await assert.rejects(
        service.submit({ taskType: 'index-file', payload: { fileId: 'legacy-file' }, handlerVersion: 0 }),
        /legacy version of pre-existing tasks/,
      );
      // A task written before handler versions existed (the upgrade marks it version 0).
      const legacy = await tasks.submit({ taskType: 'index-file', handlerVersion: 0, payload: { fileId: 'legacy-file' }, timeoutMs: 60_000 });
      // A newer task's file is not the legacy hook's to converge.
      await insertRow(fx, 'legacy-owned', 'indexing', 424242);
      const legacyOwned = await tasks.submit({ taskType: 'index-file', handlerVersion: 0, payload: { fileId: 'legacy-owned' }, timeoutMs: 60_000 });
      await insertRow(fx, 'future-file', 'indexing');
      const unknownVersion = await tasks.submit({ taskType: 'index-file', handlerVersion: 7, payload: { fileId: 'future-file' }, timeoutMs: 60_000 });
      const unknownType = await tasks.submit({ taskType: 'no-such-type', handlerVersion: 1, payload: {}, timeoutMs: 60_000 });
      await runner.start();
      const l = await waitForTask(tasks, legacy.taskId, isTerminal);
      assert.equal(l.state, 'failed');
      assert.equal(l.handlerVersion, 0);
      assert.equal(l.errorCode, 'legacy_not_executable');
      assert.equal(await rowState(fx, 'legacy-file'), 'error', 'the legacy failure hook converged the file');
      assert.equal((await waitForTask(tasks, legacyOwned.taskId, isTerminal)).errorCode, 'legacy_not_executable');
      assert.equal(await rowState(fx, 'legacy-owned'), 'indexing', 'a file owned by a task is left alone');
      const v = await waitForTask(tasks, unknownVersion.taskId, isTerminal);
      assert.deepEqual([v.state, v.errorCode, v.attemptCount, v.attemptOwner], ['failed', 'unknown_handler_version', 1, null]);
      assert.match(v.errorMessage ?? '', /no handler version 7/);
      assert.equal(await rowState(fx, 'future-file'), 'indexing', 'no hook of another version runs for an unknown version');
      // A type the registry does not know is never claimed (a newer worker's, during a rolling
      // deploy): it stays pending, untouched, after a sweep.
      await runner.sweep();
      const t = await tasks.read(unknownType.taskId);
      assert.deepEqual([t?.state, t?.attemptCount, t?.errorCode], ['pending', 0, null]);
    });

    test('T5 a domain transaction that outlives the lease is rolled back; the attempt is converged as lost', async () => {
      const { fx, tasks, service, runner } = await setup({ LEASE_SECONDS: '2' });
      const { taskId } = await tasks.transaction(async (tx) => {
        const r = await service.submit({ taskType: 'fx-late-commit', payload: { rowId: 'late' } }, tx);
        await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES ('late', 'indexing', ?)", [r.taskId]);
        return r;
      });
      await runner.start();
      const done = await waitForTask(tasks, taskId, isTerminal);
      assert.equal(done.state, 'failed');
      assert.equal(done.errorCode, 'lost');
      assert.equal(done.result, null);
      assert.equal(await rowState(fx, 'late'), 'error', 'the late write never committed; the failure hook converged the row');
      const ev = (await events(fx, taskId)).map((e) => e.event);
      assert.deepEqual(ev, ['start']);
    });

    test('T5 no task is claimed while its worker child starts: the claim waits for a ready process and spends no lease on the start-up', async () => {
      const { tasks, service, runner } = await setup({ LEASE_SECONDS: '1' });
      const saved = { options: process.env.NODE_OPTIONS, ms: process.env.FX_SLOW_START_MS };
      process.env.NODE_OPTIONS = `${saved.options ?? ''} --import ${pathToFileURL(path.join(REPO_ROOT, 'test/fixtures/tasks/slow-start.mjs')).href}`.trim();
      process.env.FX_SLOW_START_MS = '2500';
      let done;
      let pendingWhileStarting = 0;
      try {
        const r = await service.submit({ taskType: 'fx-quick', payload: {} });
        await runner.start(); // its start-up sweep finds the task pending and starts a process
        // The task row first, then the pool: a task taken while no process was ready fails here.
        for (;;) {
          const t = await tasks.read(r.taskId);
          const ready = runner.pool.readyCount();
          if (t!.state !== 'pending') {
            assert.ok(ready > 0, `task ${t!.state} (attempt ${t!.attemptCount}) while no worker process was ready`);
            break;
          }
          assert.equal(t!.attemptCount, 0);
          if (ready === 0) pendingWhileStarting += 1;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        // The environment stays in place until the task is terminal: a process may be started late.
        done = await waitForTask(tasks, r.taskId, isTerminal);
      } finally {
        for (const [k, v] of [
          ['NODE_OPTIONS', saved.options],
          ['FX_SLOW_START_MS', saved.ms],
        ] as const) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
      assert.ok(pendingWhileStarting > 0, 'the task was seen pending while the process started');
      assert.deepEqual([done.state, done.errorCode, done.attemptCount], ['succeeded', null, 1]);
      assert.ok(
        done.finishedAt!.getTime() - done.startedAt!.getTime() < 2000,
        `claimed ${done.finishedAt!.getTime() - done.startedAt!.getTime()} ms before it ended: the claim waited for the 2.5 s start-up`,
      );
    });

    test('T7 cancel of a running task records the intent and ends cancelled after the handler cleaned up', async () => {
      const { fx, tasks, service, runner } = await setup();
      await insertRow(fx, 'cancel-row');
      await runner.start();
      const never = `${tempDir('apsup-never')}/never`;
      const r = await service.submit({ taskType: 'fx-sleep', payload: { rowId: 'cancel-row', untilFile: never, dedupe: 'cancel-me' } });
      await waitFor(async () => (await events(fx, r.taskId)).some((e) => e.event === 'start'), 20_000);
      assert.deepEqual(await tasks.cancel(r.taskId), { state: 'running', outcome: 'cancel_requested' });
      const done = await waitForTask(tasks, r.taskId, isTerminal);
      assert.equal(done.state, 'cancelled');
      assert.equal(done.cancelRequested, true);
      assert.equal(done.errorCode, 'cancelled');
      assert.deepEqual([done.attemptOwner, done.leaseExpiresAt], [null, null]);
      const ev = (await events(fx, r.taskId)).map((e) => e.event);
      assert.deepEqual(ev, ['start', 'cleanup'], 'the finally block ran before the terminal state; the work did not finish');
      const again = await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'cancel-me' } });
      assert.equal(again.outcome, 'created', 'the dedupe key was released');
      assert.equal((await waitForTask(tasks, again.taskId, isTerminal)).state, 'succeeded');
    });

    test('T8 an expired attempt is failed by the sweep with its failure hook in the terminal transaction; only idempotent types are requeued', async () => {
      const { fx, tasks, service, runner } = await setup();
      const bound = (rowId: string, taskType: string, extra: Record<string, unknown> = {}) =>
        tasks.transaction(async (tx) => {
          const r = await service.submit({ taskType, payload: { rowId, ...extra } }, tx);
          await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES (?, 'indexing', ?)", [rowId, r.taskId]);
          return r.taskId;
        });
      const plain = await bound('lost-plain', 'fx-sleep');
      const idem = await bound('lost-idem', 'fx-idempotent');
      // A worker that claimed both and then vanished: short leases, never a heartbeat.
      const ghost = new TaskStore(fx.openStore() as BaseStore);
      assert.equal((await ghost.claim('ghost-worker', 1000, TEST_TASK_TYPES))?.taskId, plain);
      assert.equal((await ghost.claim('ghost-worker', 1000, TEST_TASK_TYPES))?.taskId, idem);
      await runner.start();
      await waitLeaseExpired(tasks, plain);
      await waitLeaseExpired(tasks, idem);
      await runner.sweep();
      const p = await waitForTask(tasks, plain, isTerminal);
      assert.deepEqual([p.state, p.errorCode, p.attemptCount, p.attemptOwner], ['failed', 'lost', 1, null]);
      assert.equal(await rowState(fx, 'lost-plain'), 'error');
      const i = await waitForTask(tasks, idem, isTerminal);
      assert.deepEqual([i.state, i.attemptCount], ['succeeded', 2], 'requeued and run again');
      assert.equal(await rowState(fx, 'lost-idem'), 'indexed');
      assert.deepEqual(
        (await events(fx, idem)).filter((e) => e.event === 'start').map((e) => e.attempt),
        [2],
      );
      await runner.sweep();
      const p2 = await tasks.read(plain);
      assert.deepEqual([p2?.state, p2?.attemptCount], ['failed', 1], 'no automatic retry');
    });

    test('T8 the failure hook and the terminal write are one transaction: a failing hook leaves the attempt running until it can converge', async () => {
      const { fx, tasks, service, runner } = await setup();
      const block = `${tempDir('apsup-hook')}/block`;
      fs.writeFileSync(block, '');
      const { taskId } = await tasks.transaction(async (tx) => {
        const r = await service.submit({ taskType: 'fx-sleep', payload: { rowId: 'hook-row', hookBlockFile: block } }, tx);
        await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES ('hook-row', 'indexing', ?)", [r.taskId]);
        return r;
      });
      const ghost = new TaskStore(fx.openStore() as BaseStore);
      assert.equal((await ghost.claim('ghost-worker', 1000, TEST_TASK_TYPES))?.taskId, taskId);
      await runner.start();
      await waitLeaseExpired(tasks, taskId);
      // The hook converges the row and then throws: neither its write nor the terminal write stays.
      await runner.sweep();
      let t = await tasks.read(taskId);
      assert.equal(t?.state, 'running', 'the terminal write rolled back with the failing hook');
      assert.equal(t?.attemptOwner, 'ghost-worker');
      assert.equal(await rowState(fx, 'hook-row'), 'indexing');
      fs.rmSync(block);
      await runner.sweep();
      t = await waitForTask(tasks, taskId, isTerminal);
      assert.deepEqual([t.state, t.errorCode, t.attemptCount], ['failed', 'lost', 1]);
      assert.equal(await rowState(fx, 'hook-row'), 'error');
    });

    /** Waits until the handler of taskId recorded its start; the attempt is then running, its timeout not yet due on `clock`. */
    async function startedOnDrivenClock(kit: RunnerKit & { fx: BackendFixture }, taskId: number): Promise<void> {
      await waitFor(async () => (await events(kit.fx, taskId)).some((e) => e.event === 'start'), 30_000);
      const t = await kit.tasks.read(taskId);
      assert.equal(t?.state, 'running', 'no timeout before the driven clock reaches it, however slow this host is');
    }

    test('T9 a timeout kills the worker process; the task fails with timeout and its failure hook ran', async () => {
      const clock = new ManualClock();
      const kit = await setup({ TERMINATE_GRACE_SECONDS: '1' }, undefined, clock);
      const { fx, tasks, service, runner } = kit;
      await runner.start();
      const { taskId } = await tasks.transaction(async (tx) => {
        const r = await service.submit({ taskType: 'fx-hang', payload: { rowId: 'hang-row', sleepMs: 60_000 }, timeoutMs: 1000 }, tx);
        await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES ('hang-row', 'indexing', ?)", [r.taskId]);
        return r;
      });
      runner.notify();
      await startedOnDrivenClock(kit, taskId);
      await clock.advance(1000);
      const done = await waitForTask(tasks, taskId, isTerminal);
      assert.deepEqual([done.state, done.errorCode], ['failed', 'timeout']);
      assert.match(done.errorMessage ?? '', /timeout of 1000 ms/);
      assert.equal(await rowState(fx, 'hang-row'), 'error');
      const ev = await events(fx, taskId);
      assert.ok(!ev.some((e) => e.event === 'end'));
      for (const e of ev) await waitFor(() => !isAlive(e.pid), 5000);
      assert.equal(runner.runningCount, 0);
    });

    test('T9 a handler that observes ctx.signal and returns after the timeout does not record a success', async () => {
      const clock = new ManualClock();
      // The handler's 'aborted' event is a MySQL commit after the SIGTERM: the grace leaves it room
      // when the server stalls (seen once in a full run, at 2.25 s, the child's window for 3 s).
      const kit = await setup({ TERMINATE_GRACE_SECONDS: '15' }, undefined, clock);
      const { fx, tasks, service, runner } = kit;
      await insertRow(fx, 'late-ok');
      await runner.start();
      const r = await service.submit({
        taskType: 'fx-hang',
        payload: { rowId: 'late-ok', sleepMs: 600_000, honorSignal: true, returnOnAbort: true },
        timeoutMs: 5000,
      });
      await startedOnDrivenClock(kit, r.taskId);
      await clock.advance(5000);
      const done = await waitForTask(tasks, r.taskId, isTerminal);
      assert.deepEqual([done.state, done.errorCode, done.result], ['failed', 'timeout', null]);
      assert.deepEqual(
        (await events(fx, r.taskId)).map((e) => e.event),
        ['start', 'aborted'],
        `ctx.signal was aborted by the timeout (runner warnings: ${kit.warnings.join(' | ') || 'none'})`,
      );
      assert.equal(await rowState(fx, 'late-ok'), 'error');
    });

    test('T9 a worker maximum beyond the Node timer range does not time tasks out early', async () => {
      const { tasks, service, runner } = await setup({ MAX_TIMEOUT_SECONDS: String(40 * 24 * 3600) });
      await runner.start();
      const r = await service.submit({ taskType: 'fx-sleep', payload: { ms: 300 }, timeoutMs: 30 * 24 * 3600 * 1000 });
      const done = await waitForTask(tasks, r.taskId, isTerminal);
      assert.equal(done.state, 'succeeded', `ended ${done.state} (${done.errorCode ?? ''})`);
      assert.equal(done.timeoutMs, 30 * 24 * 3600 * 1000);
      await assert.rejects(service.submit({ taskType: 'fx-quick', payload: {}, timeoutMs: 41 * 24 * 3600 * 1000 }), /exceeds the worker maximum/);
    });

    test('shutdown: SIGTERM aborts ctx.signal within the grace period; a plain task fails interrupted_by_shutdown with its hook, an idempotent one is requeued and runs again', async () => {
      const { fx, tasks, service, runner } = await setup({ TERMINATE_GRACE_SECONDS: '3' });
      for (const id of ['sd-plain', 'sd-idem', 'sd-deaf']) await insertRow(fx, id);
      await runner.start();
      const never = `${tempDir('apsup-never')}/never`;
      const plain = await service.submit({ taskType: 'fx-sleep', payload: { rowId: 'sd-plain', untilFile: never, honorSignal: true } });
      const idem = await service.submit({ taskType: 'fx-idempotent', payload: { rowId: 'sd-idem', untilAttempt: 2, honorSignal: true } });
      // Ignores ctx.signal: stopped when the grace period ends, converged like the others.
      const deaf = await service.submit({ taskType: 'fx-sleep', payload: { rowId: 'sd-deaf', untilFile: never } });
      for (const id of [plain.taskId, idem.taskId, deaf.taskId]) {
        await waitFor(async () => (await events(fx, id)).some((e) => e.event === 'start'), 20_000);
      }
      await runner.stop();
      const p = await tasks.read(plain.taskId);
      assert.deepEqual([p?.state, p?.errorCode, p?.attemptOwner], ['failed', 'interrupted_by_shutdown', null]);
      assert.equal(await rowState(fx, 'sd-plain'), 'error', 'the failure hook ran in the terminal transaction');
      assert.deepEqual(
        (await events(fx, plain.taskId)).map((e) => e.event),
        ['start', 'cleanup'],
        'the handler saw ctx.signal and its finally block ran',
      );
      const d = await tasks.read(deaf.taskId);
      assert.deepEqual([d?.state, d?.errorCode], ['failed', 'interrupted_by_shutdown']);
      assert.equal(await rowState(fx, 'sd-deaf'), 'error');
      const i = await tasks.read(idem.taskId);
      assert.deepEqual([i?.state, i?.attemptCount, i?.attemptOwner, i?.attemptToken], ['pending', 1, null, null], 'requeued, fenced by its token');
      assert.equal(await rowState(fx, 'sd-idem'), 'indexing', 'no failure hook for a requeued task');
      assert.deepEqual(
        (await events(fx, idem.taskId)).map((e) => e.event),
        ['start', 'cleanup'],
      );
      for (const e of await events(fx)) await waitFor(() => !isAlive(e.pid), 5000);
      // The next worker host runs it again.
      const next = await makeRunner(fx, { SWEEP_SECONDS: '3600' });
      runners.push(next.runner);
      await next.runner.start();
      const again = await waitForTask(tasks, idem.taskId, isTerminal);
      assert.deepEqual([again.state, again.attemptCount], ['succeeded', 2]);
      assert.equal(await rowState(fx, 'sd-idem'), 'indexed');
    });

    test('idempotent types are requeued after a crash of the worker child, bounded by MAX_ATTEMPTS (retries_exhausted); other types fail worker_exited', async () => {
      const { fx, tasks, service, runner } = await setup({ MAX_ATTEMPTS: '3' });
      for (const id of ['cr-ok', 'cr-ex', 'cr-plain']) await insertRow(fx, id);
      await runner.start();
      const ok = await service.submit({ taskType: 'fx-idempotent', payload: { rowId: 'cr-ok', crashBelowAttempt: 3 } });
      const ex = await service.submit({ taskType: 'fx-idempotent', payload: { rowId: 'cr-ex', crashBelowAttempt: 99 } });
      const plain = await service.submit({ taskType: 'fx-sleep', payload: { rowId: 'cr-plain', crashBelowAttempt: 99 } });
      const o = await waitForTask(tasks, ok.taskId, isTerminal, 60_000);
      assert.deepEqual([o.state, o.attemptCount], ['succeeded', 3]);
      assert.equal(await rowState(fx, 'cr-ok'), 'indexed');
      const e = await waitForTask(tasks, ex.taskId, isTerminal, 60_000);
      assert.deepEqual([e.state, e.errorCode, e.attemptCount, e.attemptOwner], ['failed', 'retries_exhausted', 3, null]);
      assert.equal(await rowState(fx, 'cr-ex'), 'error', 'the failure hook ran when the retries were exhausted');
      const p = await waitForTask(tasks, plain.taskId, isTerminal);
      assert.deepEqual([p.state, p.errorCode, p.attemptCount], ['failed', 'worker_exited', 1]);
      assert.equal(await rowState(fx, 'cr-plain'), 'error');
    });

    test('a lost idempotent task whose cancel was requested ends cancelled, not requeued', async () => {
      const { fx, tasks, service, runner } = await setup();
      const { taskId } = await tasks.transaction(async (tx) => {
        const r = await service.submit({ taskType: 'fx-idempotent', payload: { rowId: 'lost-cancel' } }, tx);
        await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES ('lost-cancel', 'indexing', ?)", [r.taskId]);
        return r;
      });
      const ghost = new TaskStore(fx.openStore() as BaseStore);
      assert.equal((await ghost.claim('ghost-worker', 1000, TEST_TASK_TYPES))?.taskId, taskId);
      assert.equal((await tasks.cancel(taskId)).outcome, 'cancel_requested');
      await runner.start();
      await waitLeaseExpired(tasks, taskId);
      await runner.sweep();
      const t = await waitForTask(tasks, taskId, isTerminal);
      assert.deepEqual([t.state, t.attemptCount, t.attemptOwner], ['cancelled', 1, null]);
      assert.equal(await rowState(fx, 'lost-cancel'), 'error', 'the hook converged the row the lost attempt left');
      assert.deepEqual(await events(fx, taskId), [], 'never run again');
    });

    test('a failure hook that keeps failing is bounded: the task fails failure_hook_failed without it and releases its slot and dedupe key', async () => {
      const { fx, tasks, service, runner } = await setup({ FAILURE_HOOK_MAX_ATTEMPTS: '2' });
      const block = `${tempDir('apsup-poison')}/block`;
      fs.writeFileSync(block, '');
      const { taskId } = await tasks.transaction(async (tx) => {
        const r = await service.submit({ taskType: 'fx-sleep', payload: { rowId: 'poison-row', hookBlockFile: block, dedupe: 'poison' } }, tx);
        await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES ('poison-row', 'indexing', ?)", [r.taskId]);
        return r;
      });
      const ghost = new TaskStore(fx.openStore() as BaseStore);
      assert.equal((await ghost.claim('ghost-worker', 1000, TEST_TASK_TYPES))?.taskId, taskId);
      await runner.start(); // start-up sweep: may already see the lease expired
      await waitLeaseExpired(tasks, taskId);
      await runner.sweep();
      assert.equal((await tasks.read(taskId))?.state, 'running', 'the failing hook rolled the terminal write back');
      // The start-up sweep may have counted one failure already: at most two more sweeps give up.
      for (let i = 0; i < 2 && (await tasks.read(taskId))?.state === 'running'; i += 1) await runner.sweep();
      const t = await waitForTask(tasks, taskId, isTerminal, 1000);
      assert.deepEqual([t.state, t.errorCode, t.attemptOwner], ['failed', 'failure_hook_failed', null]);
      assert.equal(await rowState(fx, 'poison-row'), 'indexing', 'committed without the hook: the domain row needs repair by hand');
      const again = await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'poison' } });
      assert.equal(again.outcome, 'created', 'the dedupe key was released');
      const a2 = await waitForTask(tasks, again.taskId, isTerminal);
      assert.equal(a2.state, 'succeeded', `the capacity slot was released (${a2.errorCode}: ${a2.errorMessage})`);
    });

    test('the runner terminates its own hung child whose lease expired and converges it as lost', async () => {
      const { fx, tasks, service, runner } = await setup({ LEASE_SECONDS: '1', TERMINATE_GRACE_SECONDS: '1' });
      await insertRow(fx, 'busy-row');
      await runner.start();
      const r = await service.submit({ taskType: 'fx-busy', payload: { rowId: 'busy-row' }, timeoutMs: 600_000 });
      await waitFor(async () => (await events(fx, r.taskId)).some((e) => e.event === 'start'), 20_000);
      await waitLeaseExpired(tasks, r.taskId, 20_000);
      await runner.sweep(); // what the SWEEP_SECONDS timer runs
      const t = await waitForTask(tasks, r.taskId, isTerminal);
      assert.deepEqual([t.state, t.errorCode, t.attemptCount], ['failed', 'lost', 1]);
      assert.equal(await rowState(fx, 'busy-row'), 'error');
      for (const e of await events(fx, r.taskId)) await waitFor(() => !isAlive(e.pid), 5000);
      await waitFor(() => runner.runningCount === 0, 5000);
    });

    test('a cancel seen by the background heartbeat aborts ctx.signal: a handler without control points ends cancelled', async () => {
      const { fx, tasks, service, runner } = await setup({ LEASE_SECONDS: '3' });
      await runner.start();
      const r = await service.submit({ taskType: 'fx-hang', payload: { sleepMs: 600_000, honorSignal: true }, timeoutMs: 600_000 });
      await waitFor(async () => (await events(fx, r.taskId)).some((e) => e.event === 'start'), 20_000);
      assert.equal((await tasks.cancel(r.taskId)).outcome, 'cancel_requested');
      const t = await waitForTask(tasks, r.taskId, isTerminal, 20_000);
      assert.equal(t.state, 'cancelled');
      assert.deepEqual(
        (await events(fx, r.taskId)).map((e) => e.event),
        ['start', 'aborted'],
      );
    });

    test('ctx.onComplete: the final domain write commits with the task success, or not at all', async () => {
      const { fx, tasks, service, runner } = await setup();
      await insertRow(fx, 'fin-ok');
      await insertRow(fx, 'fin-bad');
      await runner.start();
      const ok = await service.submit({ taskType: 'fx-finalize', payload: { rowId: 'fin-ok' } });
      const bad = await service.submit({ taskType: 'fx-finalize', payload: { rowId: 'fin-bad', badResult: true } });
      assert.equal((await waitForTask(tasks, ok.taskId, isTerminal)).state, 'succeeded');
      assert.equal(await rowState(fx, 'fin-ok'), 'indexed');
      const b = await waitForTask(tasks, bad.taskId, isTerminal);
      assert.deepEqual([b.state, b.errorCode], ['failed', 'handler_failed']);
      assert.equal(await rowState(fx, 'fin-bad'), 'error', 'the final write rolled back with the failed success transaction; the hook converged the row');
    });

    test('readiness: a running runner publishes a short-TTL fact, withdraws it on stop and deletes long-expired facts', async () => {
      const { fx, tasks, runner } = await setup({ READINESS_TTL_SECONDS: '1' });
      assert.equal((await tasks.readReadiness()).liveWorkers, 0);
      // A worker that vanished long ago without withdrawing: deleted by the next publication.
      await fx.query(
        "INSERT INTO pc_durable_task_workers (worker_id, published_at, expires_at) VALUES ('tasks:gone', '2000-01-01 00:00:00.000', '2000-01-01 00:00:15.000')",
      );
      await runner.start();
      assert.equal((await fx.query("SELECT worker_id FROM pc_durable_task_workers WHERE worker_id = 'tasks:gone'")).length, 0, 'expired facts are deleted');
      const live = await tasks.readReadiness();
      assert.ok(live.liveWorkers >= 1);
      assert.ok(live.latestPublishedAt instanceof Date);
      // Still published after more than one TTL while it runs.
      const startedAt = live.dbNow.getTime();
      await waitFor(async () => (await tasks.readReadiness()).dbNow.getTime() > startedAt + 1500, 10_000, 100);
      assert.ok((await tasks.readReadiness()).liveWorkers >= 1);
      await runner.stop();
      assert.equal((await tasks.readReadiness()).liveWorkers, 0, 'withdrawn on stop, not left to expire');
    });

    test('datasets: a plain re-submit of a failed dataset starts over (only an explicit resume continues); a cancelled one does not stay generating', async () => {
      const { fx, tasks, service, runner } = await setup({}, REFERENCE_TASKS_MODULE);
      await runner.start();
      const ds = async (id: string) => (await fx.query('SELECT generated, state, task_id FROM ref_datasets WHERE dataset_id = ?', [id]))[0];
      const first = await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'd2', items: 3, failAtItem: 2 } });
      assert.equal((await waitForTask(tasks, first.taskId, isTerminal)).state, 'failed');
      assert.deepEqual([Number((await ds('d2')).generated), (await ds('d2')).state], [1, 'failed']);
      const plain = await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'd2', items: 3 } });
      const done = await waitForTask(tasks, plain.taskId, isTerminal);
      assert.deepEqual(done.result, { datasetId: 'd2', generated: 3, resumedFrom: 0 }, 'not resumed implicitly');
      // Cancel: the handler has no cleanup of its own; the hook in the cancel transaction converges the dataset.
      const long = await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'd3', items: 500, itemDelayMs: 50 } });
      await waitFor(async () => Number((await ds('d3'))?.generated ?? 0) >= 1, 20_000);
      assert.equal((await tasks.cancel(long.taskId)).outcome, 'cancel_requested');
      assert.equal((await waitForTask(tasks, long.taskId, isTerminal)).state, 'cancelled');
      assert.notEqual((await ds('d3')).state, 'generating');
    });

    test('datasets: a type-derived dedupe key cannot be overridden; a dataset owned by another active task is refused; a checkpoint that lost the row raises attempt_lost', async () => {
      const { fx, tasks, service, runner } = await setup({}, REFERENCE_TASKS_MODULE);
      // Another active task (written around the service, under another key) owns d6.
      const other = await tasks.submit({
        taskType: 'generate-dataset',
        handlerVersion: 1,
        payload: { datasetId: 'd6', items: 2 },
        dedupeKey: 'raw:d6',
        timeoutMs: 60_000,
      });
      const ghost = new TaskStore(fx.openStore() as BaseStore);
      assert.equal((await ghost.claim('ghost-worker', 60_000, TEST_TASK_TYPES))?.taskId, other.taskId);
      await assert.rejects(
        service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'd5', items: 2 }, dedupeKey: 'elsewhere' }),
        /derives its dedupe key/,
      );
      assert.equal(
        (await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'd5', items: 1 }, dedupeKey: 'dataset:d5' })).outcome,
        'created',
        'repeating the key is fine',
      );
      await fx.query(
        "INSERT INTO ref_datasets (dataset_id, target_items, generated, state, task_id, attempt_token) VALUES ('d6', 2, 0, 'generating', ?, 'ghost')",
        [other.taskId],
      );
      await runner.start();
      const refused = await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'd6', items: 2 } });
      const r = await waitForTask(tasks, refused.taskId, isTerminal);
      assert.deepEqual([r.state, r.errorCode], ['failed', 'dataset_busy']);
      assert.equal(Number((await fx.query("SELECT task_id FROM ref_datasets WHERE dataset_id = 'd6'"))[0].task_id), other.taskId, 'left to its owner');
      // The row is taken over under a running attempt: its next checkpoint refuses to go on.
      const victim = await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'd7', items: 500, itemDelayMs: 50 } });
      await waitFor(async () => Number((await fx.query("SELECT generated FROM ref_datasets WHERE dataset_id = 'd7'"))[0]?.generated ?? 0) >= 1, 20_000);
      await fx.query("UPDATE ref_datasets SET task_id = ?, attempt_token = 'thief' WHERE dataset_id = 'd7'", [other.taskId]);
      const v = await waitForTask(tasks, victim.taskId, isTerminal);
      assert.deepEqual([v.state, v.errorCode, v.result], ['failed', 'attempt_lost', null], 'not a success without its writes');
    });

    test('resume after a lost attempt: the dataset task fails lost with its hook, and an explicit resume continues from the checkpoint', async () => {
      const { fx, tasks, service, runner } = await setup({}, REFERENCE_TASKS_MODULE);
      const sub = await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'd8', items: 4 } });
      const ghost = new TaskStore(fx.openStore() as BaseStore);
      const c = await ghost.claim('ghost-worker', 1000, TEST_TASK_TYPES);
      assert.equal(c?.taskId, sub.taskId);
      // What the vanished attempt had checkpointed before it stopped heartbeating.
      await fx.query("UPDATE ref_datasets SET generated = 2, state = 'generating', attempt_token = ? WHERE dataset_id = 'd8' AND task_id = ?", [
        c!.attemptToken,
        sub.taskId,
      ]);
      await runner.start();
      await waitLeaseExpired(tasks, sub.taskId);
      await runner.sweep();
      const lost = await waitForTask(tasks, sub.taskId, isTerminal);
      assert.deepEqual([lost.state, lost.errorCode], ['failed', 'lost']);
      assert.equal(String((await fx.query("SELECT state FROM ref_datasets WHERE dataset_id = 'd8'"))[0].state), 'failed');
      const resumed = await service.resume(sub.taskId);
      const done = await waitForTask(tasks, resumed.taskId, isTerminal);
      assert.deepEqual([done.state, done.result], ['succeeded', { datasetId: 'd8', generated: 4, resumedFrom: 2 }]);
    });

    test('resume of a failed dataset task continues from the persisted count and reuses the dedupe key; other resumes are refused', async () => {
      const { fx, tasks, service, runner } = await setup({}, REFERENCE_TASKS_MODULE);
      await runner.start();
      const first = await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'd1', items: 4, failAtItem: 3, itemDelayMs: 100 } });
      const failed = await waitForTask(tasks, first.taskId, isTerminal);
      assert.equal(failed.state, 'failed');
      const ds = async () => (await fx.query("SELECT generated, state, task_id FROM ref_datasets WHERE dataset_id = 'd1'"))[0];
      assert.deepEqual([Number((await ds()).generated), (await ds()).state], [2, 'failed']);
      await assert.rejects(service.resume(first.taskId + 1000), InvalidArgumentError);

      const resumed = await service.resume(first.taskId);
      assert.equal(resumed.outcome, 'created');
      assert.notEqual(resumed.taskId, first.taskId);
      assert.equal(resumed.dedupeKey, 'dataset:d1');
      const dup = await service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'd1', items: 4 } });
      assert.deepEqual([dup.outcome, dup.taskId], ['duplicate', resumed.taskId], 'the resumed task holds the dataset key');
      const done = await waitForTask(tasks, resumed.taskId, isTerminal);
      assert.equal(done.state, 'succeeded');
      assert.equal(done.resumedFromTaskId, first.taskId);
      assert.deepEqual(done.result, { datasetId: 'd1', generated: 4, resumedFrom: 2 });
      assert.equal(done.progressMessage, 'generating from item 3');
      assert.deepEqual([Number((await ds()).generated), (await ds()).state, Number((await ds()).task_id)], [4, 'completed', resumed.taskId]);
      await assert.rejects(service.resume(resumed.taskId), /only a failed task can be resumed/);

      // A failed task of a type without explicit resume is refused.
      await runner.stop();
      const idx = await tasks.submit({ taskType: 'index-file', handlerVersion: 1, payload: { fileId: 'nf' }, timeoutMs: 60_000 });
      const c = await tasks.claim('w', 60_000, TEST_TASK_TYPES);
      assert.equal(c?.taskId, idx.taskId);
      await tasks.fail(idx.taskId, c!.attemptToken, 'x', 'x');
      await assert.rejects(service.resume(idx.taskId), /does not declare explicit resume/);
    });
  });
}
