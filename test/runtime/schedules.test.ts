// Acceptance A5 and A7 (RFC 12.5, 12.7; sections 2 and 4).
//
//   A5: each family's schedule is its own: a family whose only worker is busy keeps being due,
//       but its checkpoint and scan generation do not move while it cannot start a scan, while
//       another family keeps checking on its own period; a scan completes (scan_in_progress
//       cleared) without waiting for any worker to succeed.
//   A7: with <PREFIX>_SCHEDULE_ENABLED=false ordinary dirty keys are not run, while explicit
//       triggers, requests accepted before the start, and keys a scan admitted before the
//       schedule was switched off still are; the unfinished scan is ended without admitting more.
//       A partial invocation (topic-memory window) under an off schedule leaves its rest dirty
//       until the next explicit trigger.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { appendTopicSource, topicMemory, TOPIC_MEMORY_BINDING } from '../../src/families/topic-memory.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BACKENDS, createBackend, term, waitFor, type BackendFixture } from '../helpers/backends.ts';
import {
  P,
  bindingOf,
  createFixtureTables,
  intentOf,
  openGate,
  runs,
  setBehaviour,
  startRuntime,
  statsOf,
  testFamily,
  waitForState,
} from '../fixtures/runtime-harness.ts';

for (const backend of BACKENDS) {
  describe(`[${backend}] A5 independent schedules; no capacity, no checkpoint; scans do not wait for workers`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      await setBehaviour(fx, 'fx-busy', '*', 'gate');
      await setBehaviour(fx, 'fx-fail', '*', 'fail');
      for (const s of ['x1', 'x2', 'x3']) await fx.store.markDirty(bindingOf('fx-busy'), s);
      await fx.store.markDirty(bindingOf('fx-free'), 'f1');
      for (const s of ['e1', 'e2', 'e3']) await fx.store.markDirty(bindingOf('fx-fail'), s);
      runtime = await startRuntime(fx, [
        testFamily('fx-busy', { maxWorkers: 1, schedule: { kind: 'interval', seconds: 1 } }),
        testFamily('fx-free', { maxWorkers: 1, schedule: { kind: 'interval', seconds: 1 } }),
        testFamily('fx-fail', { maxWorkers: 1, schedule: { kind: 'interval', seconds: 3600 } }),
      ]);
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('a scan completes without waiting for its workers to succeed (or to finish)', async () => {
      // fx-fail: every invocation fails; its only scan admitted all three keys and is finished.
      await waitFor(() => (statsOf(runtime, 'fx-fail').failures.failed ?? 0) >= 3, 20_000);
      const failState = await fx.store.readBindingState(bindingOf('fx-fail'));
      assert.equal(failState.scanInProgress, false);
      assert.equal(failState.scanGeneration, 1);
      for (const s of ['e1', 'e2', 'e3']) {
        const i = await intentOf(fx, 'fx-fail', s);
        assert.equal(i!.lastAutoScanGeneration, 1);
        assert.ok(i!.requestedGeneration > i!.handledGeneration, `${s} admitted, still owed`);
      }
      // fx-busy: its first key is held at the gate; the scan that admitted all three has ended.
      await waitFor(async () => (await runs(fx, 'fx-busy')).length === 1, 20_000);
      const busyState = await fx.store.readBindingState(bindingOf('fx-busy'));
      assert.equal(busyState.scanInProgress, false);
      for (const s of ['x1', 'x2', 'x3']) assert.equal((await intentOf(fx, 'fx-busy', s))!.requestedGeneration, 1);
    });

    test('the busy family keeps being due but its checkpoint stays while another family keeps its own period', async () => {
      const busyBefore = await fx.store.readBindingState(bindingOf('fx-busy'));
      const freeBefore = await fx.store.readBindingState(bindingOf('fx-free'));
      const ticksBefore = runtime.supervisors[0].ticks;
      const windowStart = Date.now();
      // fx-free checks on its own period: two more scans of its own.
      await waitFor(async () => (await fx.store.readBindingState(bindingOf('fx-free'))).scanGeneration >= freeBefore.scanGeneration + 2, 20_000);
      const busyDuring = await fx.store.readBindingState(bindingOf('fx-busy'));
      // Being overdue without capacity is no reason to spin: the worker's exit is the wake-up.
      const rate = (runtime.supervisors[0].ticks - ticksBefore) / ((Date.now() - windowStart) / 1000);
      assert.ok(rate < 30, `supervisor rounds per second while fx-busy is overdue: ${rate.toFixed(1)}`);
      assert.equal(busyDuring.scanGeneration, busyBefore.scanGeneration, 'no scan without capacity');
      assert.equal(busyDuring.lastScheduleCheckpointAt?.getTime(), busyBefore.lastScheduleCheckpointAt?.getTime(), 'checkpoint not advanced');
      const stats = statsOf(runtime, 'fx-busy');
      assert.ok(stats.nextDueAt !== null && Date.parse(stats.nextDueAt) <= Date.now(), 'fx-busy is (still) due');
      assert.equal(stats.running, 1);
      assert.equal((await runs(fx, 'fx-busy')).length, 1);

      // Capacity comes back: the overdue check happens at once and moves the checkpoint.
      for (const s of ['x1', 'x2', 'x3']) await openGate(fx, 'fx-busy', s, 3);
      await waitFor(async () => (await fx.store.readBindingState(bindingOf('fx-busy'))).scanGeneration > busyBefore.scanGeneration, 10_000);
      const busyAfter = await fx.store.readBindingState(bindingOf('fx-busy'));
      assert.ok(busyAfter.lastScheduleCheckpointAt!.getTime() > busyBefore.lastScheduleCheckpointAt!.getTime());
      await waitFor(async () => {
        for (const s of ['x1', 'x2', 'x3']) {
          const i = await intentOf(fx, 'fx-busy', s);
          if (i!.handledGeneration < 1) return false;
        }
        return true;
      }, 20_000);
    });
  });

  describe(`[${backend}] A7 schedule off: ordinary dirty keys wait; triggers and owed requests run`, () => {
    let fx: BackendFixture;
    let runtime: Runtime;

    before(async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      // Before this runtime: d1..d3 have ordinary work; an earlier holder began a scan and
      // admitted d1 only (a persisted admission), then went away; o1 holds an accepted request.
      for (const s of ['d1', 'd2', 'd3']) await fx.store.markDirty(bindingOf('fx-off'), s);
      await fx.store.acceptRequest(bindingOf('fx-off'), 'o1');
      const acquired = await fx.store.acquireTerm('global', 'earlier-holder', 3000);
      const earlier = term('global', 'earlier-holder', acquired.supervisorGeneration);
      const scan = await fx.store.beginScan(earlier, bindingOf('fx-off'), { kind: 'interval', intervalSeconds: 1 });
      const page = await fx.store.admitScanPage(earlier, bindingOf('fx-off'), scan.scanGeneration, 0, 1);
      assert.deepEqual(
        page.keys.map((k) => k.scopeId),
        ['d1'],
      );
      await fx.store.invalidateTerm('global', { holderId: earlier.holderId, supervisorGeneration: earlier.supervisorGeneration });
      runtime = await startRuntime(fx, [testFamily('fx-off', { maxWorkers: 2, schedule: { kind: 'interval', seconds: 1 } }), topicMemory], {
        env: {
          [`${P}FX_OFF_SCHEDULE_ENABLED`]: 'false',
          [`${P}TOPIC_MEMORY_SCHEDULE_ENABLED`]: 'false',
        },
      });
    });
    after(async () => {
      await runtime?.stop();
      await fx?.cleanup();
    });

    test('explicit triggers, accepted requests and persisted admissions run; ordinary dirty keys do not', async () => {
      await runtime.trigger('fx-off', 't1');
      await waitFor(async () => {
        for (const s of ['t1', 'o1', 'd1']) {
          const i = await intentOf(fx, 'fx-off', s);
          if (!i || i.handledGeneration < 1) return false;
        }
        return true;
      }, 20_000);
      // The scan left unfinished by the earlier holder is ended without admitting d2, d3.
      await waitFor(async () => !(await fx.store.readBindingState(bindingOf('fx-off'))).scanInProgress, 10_000);
      // A later trigger as a barrier: everything the runtime would do on its own has been done.
      await runtime.trigger('fx-off', 't2');
      await waitFor(async () => (await intentOf(fx, 'fx-off', 't2'))!.handledGeneration === 1, 20_000);
      for (const s of ['d2', 'd3']) {
        const i = await intentOf(fx, 'fx-off', s);
        assert.equal(i!.requestedGeneration, 0, `${s} was not admitted`);
        assert.ok(i!.dirtyGeneration > i!.cleanGeneration, `${s} keeps its ordinary work`);
        assert.equal((await runs(fx, 'fx-off', s)).length, 0, `${s} did not run`);
      }
      const state = await fx.store.readBindingState(bindingOf('fx-off'));
      assert.equal(state.scanGeneration, 1, 'no new automatic scan while the schedule is off');
      // An explicit trigger of a dirty key runs it.
      await runtime.trigger('fx-off', 'd2');
      await waitFor(async () => (await intentOf(fx, 'fx-off', 'd2'))!.handledGeneration === 1, 20_000);
      assert.equal((await runs(fx, 'fx-off', 'd3')).length, 0);
    });

    test('A4 by trigger: a partial invocation leaves the rest dirty until the next trigger', async () => {
      await runtime.store.transaction(async (tx) => {
        for (let i = 0; i < 7; i += 1) await appendTopicSource(runtime.store, 'Q', { words: 2 }, tx);
      });
      runtime.notifyDirty('topic-memory');
      const cursor = async () => {
        const rows = await fx.query('SELECT through_seq FROM ref_topic_cursors WHERE scope_id = ?', ['Q']);
        return rows.length === 0 ? 0 : Number(rows[0].through_seq);
      };
      for (const [generation, through] of [
        [1, 3],
        [2, 6],
        [3, 7],
      ] as const) {
        await runtime.trigger('topic-memory', 'Q');
        await waitForState(fx, runtime, ['topic-memory'], async () => (await fx.store.readIntent(TOPIC_MEMORY_BINDING, 'Q'))!.handledGeneration === generation);
        assert.equal(await cursor(), through, 'one window per invocation');
        const i = await fx.store.readIntent(TOPIC_MEMORY_BINDING, 'Q');
        assert.equal(i!.requestedGeneration, generation, 'no self-continuation');
        assert.equal(i!.dirtyGeneration > i!.cleanGeneration, through < 7, 'clean only after the last window');
      }
      assert.equal(statsOf(runtime, 'topic-memory').failures.failed ?? 0, 0);
    });
  });
}
