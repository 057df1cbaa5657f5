// Acceptance A5 for a cron family in the runtime (RFC 4: "没有容量的类型保持到期，不推进 checkpoint，也不
// 假装已经执行检查"; cron "错过多个 fire 时合并为一次 catch-up，并推进到数据库当前时间之前最新的 fire"):
// a cron family (every 2 s, with a time zone) whose only worker is busy keeps its checkpoint and
// scan generation through several fires; once the worker is free it runs ONE scan for the latest
// fire (not one per missed fire, not the first missed one), and the dirty key is processed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Runtime } from '../../src/runtime/runtime.ts';
import type { SchedulePolicy, ScanStart } from '../../src/store/types.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { bindingOf, createFixtureTables, intentOf, openGate, runs, setBehaviour, startRuntime, testFamily, waitForState } from '../fixtures/runtime-harness.ts';

const F = 'fx-cron';
const EVERY_SECONDS = 2;

for (const backend of BACKENDS) {
  describe(`[${backend}] A5 cron: no capacity, no checkpoint; missed fires merge into one`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      await setBehaviour(fx, F, 'busy', 'gate');
      runtime = await startRuntime(fx, [
        testFamily(F, { maxWorkers: 1, schedule: { kind: 'cron', expression: `*/${EVERY_SECONDS} * * * * *`, timezone: 'Asia/Shanghai' } }),
      ]);
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('the busy family stays due without moving its checkpoint; the free family scans once, for the latest fire', async () => {
      const binding = bindingOf(F);
      // The first enabled check catches up at once (NULL checkpoint).
      await waitFor(async () => (await fx.store.readBindingState(binding)).lastScheduleCheckpointAt !== null, 20_000);
      await runtime.trigger(F, 'busy');
      await waitFor(async () => (await runs(fx, F, 'busy')).length === 1, 20_000);
      const held = await fx.store.readBindingState(binding);
      assert.equal(held.scanInProgress, false);
      await runtime.markDirty(F, 'd1');
      // At least three fires pass (database time) while the only worker is busy.
      const checkpoint = held.lastScheduleCheckpointAt!.getTime();
      await waitFor(async () => {
        const s = await fx.store.readBindingState(binding);
        assert.equal(s.lastScheduleCheckpointAt!.getTime(), checkpoint, 'the checkpoint moved without capacity');
        assert.equal(s.scanGeneration, held.scanGeneration, 'a scan began without capacity');
        return s.dbNow.getTime() >= checkpoint + (3 * EVERY_SECONDS + 1) * 1000;
      }, 20_000);
      assert.equal((await intentOf(fx, F, 'd1'))!.requestedGeneration, 0, 'd1 not admitted while the family had no capacity');

      const calls: Array<{ policy: SchedulePolicy; result: ScanStart }> = [];
      const store = runtime.store as unknown as { beginScan: (...args: unknown[]) => Promise<ScanStart> };
      const original = store.beginScan.bind(runtime.store);
      store.beginScan = async (...args: unknown[]) => {
        const result = await original(...args);
        calls.push({ policy: args[2] as SchedulePolicy, result });
        return result;
      };
      await openGate(fx, F, 'busy');
      await waitForState(
        fx,
        runtime,
        [F],
        async () => {
          const i = await intentOf(fx, F, 'd1');
          return i!.handledGeneration >= 1 && i!.cleanGeneration === i!.dirtyGeneration;
        },
        20_000,
      );
      const first = calls.find((c) => c.result.outcome !== 'not_due')!;
      assert.ok(first, `a scan began once the worker was free: ${JSON.stringify(calls)}`);
      assert.equal(first.policy.kind, 'cron');
      const fire = (first.policy as { fireAt: Date }).fireAt.getTime();
      assert.equal(first.result.outcome, 'started');
      assert.equal(first.result.scanGeneration, held.scanGeneration + 1, 'one scan for all the missed fires');
      assert.ok(
        fire >= checkpoint + 3 * EVERY_SECONDS * 1000,
        `the catch-up is for the latest fire, not the first missed one (checkpoint ${new Date(checkpoint).toISOString()}, fire ${new Date(fire).toISOString()})`,
      );
      assert.equal(fire % (EVERY_SECONDS * 1000), 0, 'a cron fire');
      assert.equal(first.result.lastScheduleCheckpointAt?.getTime(), fire, 'the checkpoint advanced to that fire');
      assert.ok(fire <= first.result.dbNow.getTime(), 'a fire at or before database time');
    });
  });
}
