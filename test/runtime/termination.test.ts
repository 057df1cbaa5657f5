// Worker termination (RFC 6: "超时后停止该 Worker，先进行有限的正常终止等待，再执行必要的强制终止；确认退出后
// 才释放额度并安排重试"; RFC 2: a terminating process still holds budget), with real worker
// processes on both backends:
//
//   - a processor that honours ctx.signal replies `failed` when its timeout aborts it: the
//     invocation is still recorded as a timeout, the budget slot stays held until the process is
//     gone, and the dying process is never handed the next key (which must not crash);
//   - a process that ignores SIGTERM (but replies `failed` at once) is killed with SIGKILL when
//     the grace period ends, and its budget slot stays held until that exit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/runtime/manual-clock.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  createFixtureTables,
  intentOf,
  type RunRow,
  isAlive,
  runs,
  setBehaviour,
  startRuntime,
  statsOf,
  testFamily,
  waitForState,
} from '../fixtures/runtime-harness.ts';

const F = 'fx-term';

for (const backend of BACKENDS) {
  describe(`[${backend}] termination: the budget is released only after the confirmed exit`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;
    const logs: Array<Record<string, unknown>> = [];
    // Invocation timeouts and grace periods on a clock the tests drive; the term renews in real time.
    const workers = new ManualClock();

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      await setBehaviour(fx, F, 'coop', 'gate', { remaining: 1 }); // honours ctx.signal; the retry succeeds
      await setBehaviour(fx, F, 'stub', 'stubborn', { remaining: 1 });
      // One worker, a 1 s grace period (FAST_TUNING) and a 6 s timeout, both reached only when a
      // test advances the workers' clock (never during a slow start-up).
      runtime = await startRuntime(fx, [testFamily(F, { maxWorkers: 1, timeoutSeconds: 6 })], { logSink: logs, workerClock: workers });
      // Warm the family's worker first, so the timed-out invocations below run on a warm one.
      await runtime.trigger(F, 'warm-up');
      await waitForState(fx, runtime, [F], async () => (await intentOf(fx, F, 'warm-up'))?.handledGeneration === 1, 30_000);
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    /** Samples until the process is gone: the budget slot must be held (running 1) while it lives. */
    async function budgetHeldUntilExit(pid: number, label: string): Promise<void> {
      const deadline = Date.now() + 20_000;
      while (isAlive(pid)) {
        const running = statsOf(runtime, F).running;
        if (isAlive(pid)) assert.equal(running, 1, `${label}: the budget was released while process ${pid} was still alive`);
        assert.ok(Date.now() < deadline, `${label}: process ${pid} did not exit`);
        await new Promise((r) => setTimeout(r, 5));
      }
    }

    test('a processor that honours ctx.signal and times out: recorded as timeout; the next key runs on a fresh process', async () => {
      const before = statsOf(runtime, F);
      await runtime.trigger(F, 'coop');
      const [run] = (await waitFor(async () => {
        const list = await runs(fx, F, 'coop');
        return list.length === 1 ? list : undefined;
      }, 20_000)) as [RunRow];
      // Queued behind it (budget 1): dispatched the moment the budget slot is free.
      await runtime.trigger(F, 'next');
      await workers.advance(6000); // the timeout: SIGTERM; the processor honours it and leaves within the grace
      await budgetHeldUntilExit(run.pid, 'coop');
      await waitForState(
        fx,
        runtime,
        [F],
        async () => (await intentOf(fx, F, 'next'))?.handledGeneration === 1 && (await intentOf(fx, F, 'coop'))?.handledGeneration === 1,
        20_000,
      );
      const [first] = await runs(fx, F, 'coop');
      assert.equal(first.outcome, 'threw', 'the processor noticed the abort and replied failed');
      const stats = statsOf(runtime, F);
      assert.equal(stats.timeouts, before.timeouts + 1, 'the reply during the termination does not hide the timeout');
      assert.deepEqual(stats.failures, { ...before.failures, timeout: (before.failures.timeout ?? 0) + 1 }, 'one timeout, no `failed`, no crash');
      const [next] = await runs(fx, F, 'next');
      assert.notEqual(next.pid, run.pid, 'the dying process was not reused');
      assert.equal(next.outcome, 'returned');
      assert.equal(logs.filter((l) => l.msg === 'worker did not exit within the grace period; killing it').length, 0, 'it left within the grace period');
    });

    test('a process that ignores SIGTERM is killed after the grace period; the budget is held until then', async () => {
      const before = statsOf(runtime, F);
      await runtime.trigger(F, 'stub');
      // Armed: its own SIGTERM handler is installed (an earlier timeout would reach the worker's).
      const [run] = (await waitFor(async () => {
        const list = await runs(fx, F, 'stub');
        return list.length === 1 && list[0].mode === 'stubborn-armed' ? list : undefined;
      }, 20_000)) as [RunRow];
      await runtime.trigger(F, 'next2');
      await workers.advance(6000); // the timeout: SIGTERM, which this process ignores
      // The processor has thrown (its `failed` reply is on its way) while the process lives on.
      await waitFor(async () => (await runs(fx, F, 'stub'))[0]?.endedMs !== null, 20_000);
      assert.ok(isAlive(run.pid), 'the stubborn process outlives its reply');
      assert.equal(statsOf(runtime, F).running, 1, 'the budget is held during the grace period');
      await workers.advance(1000); // the grace period ends: SIGKILL
      await budgetHeldUntilExit(run.pid, 'stub');
      await waitForState(
        fx,
        runtime,
        [F],
        async () => (await intentOf(fx, F, 'next2'))?.handledGeneration === 1 && (await intentOf(fx, F, 'stub'))?.handledGeneration === 1,
        20_000,
      );
      const stats = statsOf(runtime, F);
      assert.equal(stats.timeouts, before.timeouts + 1);
      assert.deepEqual(stats.failures, { ...before.failures, timeout: (before.failures.timeout ?? 0) + 1 }, 'one timeout, no crash of next2');
      const [next] = await runs(fx, F, 'next2');
      assert.notEqual(next.pid, run.pid);
      assert.equal(
        logs.filter((l) => l.msg === 'worker did not exit within the grace period; killing it' && l.workerPid === run.pid).length,
        1,
        'the SIGKILL escalation ran',
      );
    });
  });
}
