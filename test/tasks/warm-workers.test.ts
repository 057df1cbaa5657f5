// Warm task worker processes (src/tasks/attempt-pool.ts), real processes on both backends: a
// process is reused only after an attempt that ended cleanly, and then carries nothing from it
// but its handler module (none with MODULE_ISOLATION=attempt): no read handle, connection or
// timer of the attempt; a process whose attempt timed out, was
// cancelled without returning, lost its lease (SIGSTOP past the TTL) or crashed is never given
// another attempt; the database claim cap holds with a warm pool; a changed handler module is
// rebuilt from the registry for the next attempt in the same process.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, afterEach, describe, test } from 'node:test';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import type { TaskRunner } from '../../src/tasks/task-runner.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  REPO_ROOT,
  createFixtureTables,
  events,
  isAlive,
  isTerminal,
  killChildren,
  makeRunner,
  waitForTask,
  waitLeaseExpired,
  type RunnerKit,
} from './harness.ts';

for (const backend of BACKENDS) {
  describe(`warm task worker processes (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    const runners: TaskRunner[] = [];
    const stopped: number[] = [];
    async function setup(overrides: Record<string, string> = {}, tasksModule?: string, clock?: ManualClock): Promise<RunnerKit & { fx: BackendFixture }> {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      await createFixtureTables(fx);
      const kit = await makeRunner(fx, { SWEEP_SECONDS: '3600', TERMINATE_GRACE_SECONDS: '1', CAPACITY: '1', ...overrides }, tasksModule, { clock });
      runners.push(kit.runner);
      return { ...kit, fx };
    }
    afterEach(async () => {
      for (const pid of stopped.splice(0)) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
      for (const r of runners.splice(0)) await r.stop();
      killChildren();
    });
    after(async () => {
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });

    /** Runs one fx-state task to its end; returns the pid and what the handler recorded. */
    async function runState(
      kit: RunnerKit & { fx: BackendFixture },
      payload: Record<string, unknown> = {},
    ): Promise<{ pid: number; seen: Record<string, string> }> {
      const { taskId } = await kit.service.submit({ taskType: 'fx-state', payload });
      const done = await waitForTask(kit.tasks, taskId, isTerminal, 30_000);
      assert.equal(done.state, 'succeeded', `${done.errorCode}: ${done.errorMessage}`);
      const [e] = await events(kit.fx, taskId);
      assert.ok(e, 'the handler recorded its state');
      return { pid: e.pid, seen: Object.fromEntries(e.event.split(';').map((kv) => kv.split('=') as [string, string])) };
    }

    /** After a stopped or crashed attempt: that process is gone and the next attempt runs elsewhere. */
    async function assertNotReused(kit: RunnerKit & { fx: BackendFixture }, pid: number): Promise<void> {
      await waitFor(() => !isAlive(pid), 10_000);
      const next = await runState(kit);
      assert.notEqual(next.pid, pid, 'the next attempt ran in another process');
      assert.ok(!kit.runner.pool.pids().includes(pid));
    }

    /** Three attempts at capacity 1: one warm process takes all three. */
    async function threeInOneProcess(kit: RunnerKit & { fx: BackendFixture }): Promise<Array<{ pid: number; seen: Record<string, string> }>> {
      await kit.runner.start();
      const first = await runState(kit);
      const second = await runState(kit);
      const third = await runState(kit);
      assert.equal(second.pid, first.pid, 'the warm process took the next attempt');
      assert.equal(third.pid, first.pid);
      assert.equal(kit.runner.pool.spawned, 1, 'one process for three attempts at capacity 1');
      // Resources at the start of run: no read handle, connection or child process of the
      // previous attempt is still open when the next one starts.
      assert.equal(second.seen.resources, first.seen.resources);
      assert.equal(third.seen.resources, first.seen.resources);
      // Sockets: the store's pool may grow by one connection (a heartbeat overlapping a commit);
      // a read handle left open would add one per attempt and reach first + 2 by the third.
      const tcp = [first, second, third].map((s) => Number(s.seen.tcp));
      assert.ok(tcp[1]! <= tcp[0]! + 1 && tcp[2]! <= tcp[0]! + 1, `sockets at the start of each attempt: ${tcp.join(', ')}`);
      return [first, second, third];
    }

    test('a process that ended an attempt cleanly is reused, keeping its handler module and nothing else from the attempt (isolation process, the default)', async () => {
      const [first, second, third] = await threeInOneProcess(await setup());
      assert.deepEqual([first.seen.runs, second.seen.runs, third.seen.runs], ['1', '2', '3'], 'one module instance served the three attempts');
      assert.deepEqual([first.seen.evaluation, second.seen.evaluation, third.seen.evaluation], ['1', '1', '1'], 'evaluated once in the process');
      for (const s of [first, second, third]) assert.equal(s.seen.read, '1');
    });

    test('with MODULE_ISOLATION=attempt a reused process gives each attempt a fresh handler module instance', async () => {
      const [first, second, third] = await threeInOneProcess(await setup({ MODULE_ISOLATION: 'attempt' }));
      for (const s of [first, second, third]) {
        assert.equal(s.seen.runs, '1', 'the handler module is a fresh instance per attempt');
        assert.equal(s.seen.read, '1');
      }
      assert.deepEqual([first.seen.evaluation, second.seen.evaluation, third.seen.evaluation], ['1', '2', '3'], 'evaluated again in the same process');
    });

    test('a resource the attempt releases shortly after it returned does not cost the process its reuse', async () => {
      // A closing socket (a read handle's) takes a few turns, more on a loaded host: 100 ms here.
      const kit = await setup();
      await kit.runner.start();
      const first = await runState(kit, { releaseAfterMs: 100 });
      const second = await runState(kit);
      assert.equal(second.pid, first.pid, 'the process was reused');
      assert.equal(kit.runner.pool.spawned, 1);
    });

    test('a process whose attempt left a timer running is not reused', async () => {
      const kit = await setup();
      await kit.runner.start();
      const leaky = await runState(kit, { leak: true });
      await assertNotReused(kit, leaky.pid);
    });

    test('a process whose attempt timed out is never given another attempt', async () => {
      const kit = await setup();
      await kit.runner.start();
      const warm = await runState(kit);
      const { taskId } = await kit.service.submit({ taskType: 'fx-hang', payload: { sleepMs: 60_000 }, timeoutMs: 1000 });
      const t = await waitForTask(kit.tasks, taskId, isTerminal, 30_000);
      assert.deepEqual([t.state, t.errorCode], ['failed', 'timeout']);
      const [e] = await events(kit.fx, taskId);
      assert.equal(e?.pid, warm.pid, 'the timed-out attempt ran in the warm process');
      await assertNotReused(kit, warm.pid);
    });

    test('a process whose attempt was cancelled and did not return is never given another attempt', async () => {
      // The timeout ends the attempt that ignores the cancel, on a clock the test drives: never
      // before the cancel, however slow the start-up on a loaded host.
      const clock = new ManualClock();
      const kit = await setup({}, undefined, clock);
      await kit.runner.start();
      const { taskId } = await kit.service.submit({ taskType: 'fx-hang', payload: { sleepMs: 60_000 }, timeoutMs: 15_000 });
      const started = await waitFor(async () => (await events(kit.fx, taskId)).find((e) => e.event === 'start'), 15_000);
      assert.equal((await kit.service.cancel(taskId)).outcome, 'cancel_requested');
      await clock.advance(15_000);
      const t = await waitForTask(kit.tasks, taskId, isTerminal, 30_000);
      assert.ok(t.state === 'cancelled' || t.state === 'failed', `${t.state} ${t.errorCode}`);
      await assertNotReused(kit, started!.pid);
    });

    test('a process that lost its lease (SIGSTOP past the TTL) is never given another attempt', async () => {
      const kit = await setup({ LEASE_SECONDS: '1' });
      await kit.runner.start();
      const warm = await runState(kit);
      const { taskId } = await kit.service.submit({ taskType: 'fx-sleep', payload: { ms: 60_000 }, timeoutMs: 600_000 });
      await waitFor(async () => (await events(kit.fx, taskId)).some((e) => e.event === 'start'), 20_000);
      stopped.push(warm.pid);
      process.kill(warm.pid, 'SIGSTOP');
      await waitLeaseExpired(kit.tasks, taskId, 20_000);
      await kit.runner.sweep(); // finds its own attempt lost: SIGTERM, grace, SIGKILL (a stopped process)
      const t = await waitForTask(kit.tasks, taskId, isTerminal, 30_000);
      assert.deepEqual([t.state, t.errorCode], ['failed', 'lost']);
      await assertNotReused(kit, warm.pid);
    });

    test('a process that crashed during an attempt is never given another attempt', async () => {
      const kit = await setup();
      await kit.runner.start();
      const warm = await runState(kit);
      const { taskId } = await kit.service.submit({ taskType: 'fx-sleep', payload: { crashBelowAttempt: 2 }, timeoutMs: 600_000 });
      const t = await waitForTask(kit.tasks, taskId, isTerminal, 30_000);
      assert.deepEqual([t.state, t.errorCode], ['failed', 'worker_exited']);
      await assertNotReused(kit, warm.pid);
    });

    test('the database claim cap holds with a warm pool larger than the cap', async () => {
      const kit = await setup({ CAPACITY: '4', WARM_WORKERS: '4' });
      await kit.tasks.setCapacity(2);
      await kit.runner.start();
      await waitFor(() => kit.runner.pool.readyCount() === 4, 30_000); // the warm pool is up
      const ids: number[] = [];
      for (let i = 0; i < 6; i += 1) ids.push((await kit.service.submit({ taskType: 'fx-sleep', payload: { ms: 400 }, timeoutMs: 60_000 })).taskId);
      let maxRunning = 0;
      let maxProcesses = 0;
      await waitFor(
        async () => {
          maxRunning = Math.max(maxRunning, Number((await kit.fx.query("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE state = 'running'"))[0]!.n));
          maxProcesses = Math.max(maxProcesses, kit.runner.pool.size);
          return (await Promise.all(ids.map((id) => kit.tasks.read(id)))).every((t) => t && isTerminal(t));
        },
        60_000,
        20,
      );
      assert.ok(maxRunning <= 2, `at most 2 running at once, saw ${maxRunning}`);
      assert.ok(maxProcesses <= 4, `never more processes than the capacity, saw ${maxProcesses}`);
      const points = (await events(kit.fx))
        .filter((e) => e.event === 'start' || e.event === 'end')
        .map((e) => ({ at: e.atMs, delta: e.event === 'start' ? 1 : -1 }))
        .sort((a, b) => a.at - b.at || a.delta - b.delta);
      let current = 0;
      let peak = 0;
      for (const p of points) {
        current += p.delta;
        peak = Math.max(peak, current);
      }
      assert.equal(peak, 2, 'two handlers ran at once, never more');
    });

    test('a handler module changed on disk is rebuilt from the registry for the next attempt in the same process (compiled by the host first, from its source through tsx after the change)', async () => {
      const dir = fs.mkdtempSync(path.join(REPO_ROOT, 'var', 'warm-'));
      try {
        const handler = path.join(dir, 'changing.ts');
        const write = (version: number) =>
          fs.writeFileSync(
            handler,
            `import { createRequire } from 'node:module';
// tsx registers a .ts extension for require(); a process running the host-compiled modules has none.
const tsx = Boolean((createRequire(import.meta.url)('node:module') as any)._extensions['.ts']);
export default { async run(_p: unknown, ctx: any) {
  await ctx.commit((tx: any) => ctx.query(tx, 'INSERT INTO fx_task_events (task_id, event, at_ms, pid, attempt) VALUES (?, ?, ?, ?, ?)', [ctx.taskId, 'code-${version}', Date.now(), process.pid, ctx.attemptCount]));
  return { code: ${version}, tsx };
} };\n`,
          );
        write(1);
        fs.writeFileSync(
          path.join(dir, 'registry.ts'),
          `import { z } from 'zod';
export default [{ taskType: 'fx-changing', currentVersion: 1, versions: { 1: './changing.ts' }, payload: z.object({}).strict() }];\n`,
        );
        const kit = await setup({}, path.join(dir, 'registry.ts'));
        await kit.runner.start();
        const run = async () => {
          const { taskId } = await kit.service.submit({ taskType: 'fx-changing', payload: {} });
          const t = await waitForTask(kit.tasks, taskId, isTerminal, 30_000);
          assert.equal(t.state, 'succeeded', `${t.errorCode}: ${t.errorMessage}`);
          return { result: t.result, pid: (await events(kit.fx, taskId))[0]!.pid };
        };
        const a = await run();
        write(2);
        const b = await run();
        assert.deepEqual(
          [a.result, b.result],
          [
            { code: 1, tsx: false },
            { code: 2, tsx: true },
          ],
        );
        assert.equal(b.pid, a.pid, 'the same warm process ran the new code');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
