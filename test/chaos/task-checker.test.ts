// The chaos suite's durable-task invariants (chaos/task-checker.ts) on both backends, fed real
// task rows (TaskService submit, TaskStore claim / expire / complete: the triggers keep the
// history) and hand-written domain writes: a clean task passes; a task that ends with two
// attempts' items, a write by an attempt after another attempt took the task, a write past the
// attempt's lease, and a task left pending after the drain are each found with their rows.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { openTrialDb, type TrialDb } from '../../chaos/db.ts';
import { utcNowExpr } from '../../chaos/schema.ts';
import { checkTasks, emptyTaskStats } from '../../chaos/task-checker.ts';
import { taskService } from '../../chaos/task-driver.ts';
import { CHAOS_TASK_TYPE } from '../../chaos/tasks.ts';
import { BACKENDS } from '../helpers/backends.ts';
import { waitLeaseExpired } from '../tasks/harness.ts';

/** 50 ms past the lease by the database clock: a write after it is past the lease for the checker. */
const leaseOver = (tasks: TaskStore, taskId: number) => waitLeaseExpired(tasks, taskId, 10_000, 50);

for (const backend of BACKENDS) {
  describe(`chaos task checker (${backend})`, () => {
    let db: TrialDb;
    let tasks: TaskStore;
    const write = async (taskId: number, token: string, kind: string, item?: number) => {
      if (item !== undefined) await db.exec('INSERT INTO ch_task_items (task_id, item, attempt_token) VALUES (?, ?, ?)', [taskId, item, token]);
      if (kind === 'take') await db.exec("INSERT INTO ch_task_domain (task_id, attempt_token, state) VALUES (?, ?, 'running')", [taskId, token]);
      if (kind === 'done') await db.exec("UPDATE ch_task_domain SET state = 'done', attempt_token = ? WHERE task_id = ?", [token, taskId]);
      await db.exec(`INSERT INTO ch_task_log (task_id, kind, attempt_token, at) VALUES (?, ?, ?, ${utcNowExpr(backend)})`, [taskId, kind, token]);
    };
    /** Submits one task and claims it (the oldest pending: each is claimed before the next is submitted). */
    const submitAndClaim = async (leaseMs: number) => {
      const service = await taskService(db);
      const s = await service.submit({ taskType: CHAOS_TASK_TYPE, payload: { steps: 2, delayMs: 0 } });
      const c = await tasks.claim('chaos-test', leaseMs, [CHAOS_TASK_TYPE]);
      assert.equal(c?.taskId, s.taskId);
      return c!;
    };
    const runClean = async (taskId: number, token: string) => {
      await write(taskId, token, 'take');
      await write(taskId, token, 'item', 1);
      await write(taskId, token, 'item', 2);
      await write(taskId, token, 'done');
      await tasks.complete(taskId, token, null);
    };

    before(async () => {
      db = await openTrialDb(backend);
      tasks = new TaskStore(db.store as unknown as BaseStore);
    });
    after(async () => {
      await db?.cleanup();
    });

    test('a clean task and a cleanly requeued one have no violation; the triggers kept the history', async () => {
      const a = await submitAndClaim(60_000);
      await runClean(a.taskId, a.attemptToken);
      // A requeued attempt that wrote nothing after it lost the lease; its successor starts over.
      const b1 = await submitAndClaim(1000);
      await write(b1.taskId, b1.attemptToken, 'take');
      await leaseOver(tasks, b1.taskId);
      assert.equal(await tasks.expireLost(b1.taskId, b1.attemptToken, true), 'requeued');
      const b2 = await tasks.claim('chaos-test', 60_000, [CHAOS_TASK_TYPE]);
      assert.equal(b2?.taskId, b1.taskId);
      await db.exec('DELETE FROM ch_task_items WHERE task_id = ?', [b1.taskId]);
      await db.exec('DELETE FROM ch_task_domain WHERE task_id = ?', [b1.taskId]);
      await runClean(b2!.taskId, b2!.attemptToken);
      const stats = emptyTaskStats();
      assert.deepEqual(await checkTasks(db, true, stats), []);
      assert.equal(stats.succeeded, 2);
      assert.equal(stats.attempts, 3);
      assert.equal(stats.requeued, 1);
      assert.ok(stats.historyRows >= 7, `history rows: ${stats.historyRows}`);
    });

    test("two attempts' writes, a late write, a write past the lease and an unfinished task are each found", async () => {
      // Two attempts' items (1 of the first, 2 of the second: 1..2, but of two attempts).
      const t1 = await submitAndClaim(1000);
      await write(t1.taskId, t1.attemptToken, 'take');
      await write(t1.taskId, t1.attemptToken, 'item', 1);
      await leaseOver(tasks, t1.taskId);
      assert.equal(await tasks.expireLost(t1.taskId, t1.attemptToken, true), 'requeued');
      const t2 = (await tasks.claim('chaos-test', 60_000, [CHAOS_TASK_TYPE]))!;
      await db.exec('DELETE FROM ch_task_domain WHERE task_id = ?', [t1.taskId]);
      await write(t2.taskId, t2.attemptToken, 'take');
      await write(t2.taskId, t2.attemptToken, 'item', 2);
      await write(t2.taskId, t2.attemptToken, 'done');
      await tasks.complete(t2.taskId, t2.attemptToken, null);
      // A late write: the first attempt writes after the second one took the task.
      const l1 = await submitAndClaim(1000);
      await leaseOver(tasks, l1.taskId);
      assert.equal(await tasks.expireLost(l1.taskId, l1.attemptToken, true), 'requeued');
      const l2 = (await tasks.claim('chaos-test', 60_000, [CHAOS_TASK_TYPE]))!;
      await runClean(l2.taskId, l2.attemptToken);
      await write(l1.taskId, l1.attemptToken, 'item');
      // A write past the lease: still the row's attempt, but its lease has expired.
      const e = await submitAndClaim(1000);
      await leaseOver(tasks, e.taskId);
      await write(e.taskId, e.attemptToken, 'item');
      // Left pending after the drain.
      const p = await (await taskService(db)).submit({ taskType: CHAOS_TASK_TYPE, payload: { steps: 1, delayMs: 0 } });
      const found = await checkTasks(db, true);
      const kinds = found.map((v) => `${v.invariant} ${v.key}`).sort();
      assert.deepEqual(
        kinds,
        [
          `late-write task ${e.taskId}`,
          `late-write task ${l1.taskId}`,
          `lost task ${e.taskId}`,
          `lost task ${p.taskId}`,
          `two-attempts task ${t1.taskId}`,
        ].sort(),
        JSON.stringify(found, null, 1),
      );
      const late = found.find((v) => v.key === `task ${l1.taskId}`)!;
      assert.match(late.detail, /while the task row was succeeded/);
      assert.match(found.find((v) => v.invariant === 'late-write' && v.key === `task ${e.taskId}`)!.detail, /after its lease expired/);
      // Not drained: an unfinished task is the trial's drain timeout, not a safety violation here.
      assert.ok(!(await checkTasks(db, false)).some((v) => v.invariant === 'lost'));
    });
  });
}
