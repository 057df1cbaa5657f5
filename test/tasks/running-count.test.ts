// The claim cap counts running tasks (ADR T6); on MySQL since migration 0028 the count is a column
// of the 'claims' row kept by triggers, not a COUNT(*). These tests attack that count on both
// backends: every way an attempt leaves 'running' (each procedure, a rolled-back transaction, a
// DBA's UPDATE or DELETE) frees exactly one slot, and a write that keeps it running frees none; a
// heartbeat never waits for the claims row lock; a count changed by hand is repaired by
// set-capacity; racing processes leave it exact. A missing or wrong trigger, or a procedure that
// kept the count itself and forgot a path, fails here: a leaked slot claims one task too few, a
// double decrement one past the cap.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { TaskStore, type ClaimedTask } from '../../src/tasks/task-store.ts';
import { openMigrationDriver } from '../../src/migrations/drivers.ts';
import { Migrator } from '../../src/migrations/migrator.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';
import { TEST_TASK_TYPES } from '../fixtures/tasks/types.ts';
import { FIXTURE_TASKS_MODULE, StoreChild, createFixtureTables, processTestHooks, runCli, waitLeaseExpired } from './harness.ts';
import { stillPending, waitForBlockedStatement } from '../helpers/lock-wait.ts';

const CAP = 3;
const LEASE = 60_000;

async function countRunning(fx: BackendFixture): Promise<number> {
  return Number((await fx.query("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE state = 'running'"))[0].n);
}

/** MySQL: the row's count equals the table's; SQLite counts the table itself. */
async function assertCountExact(fx: BackendFixture, label: string): Promise<void> {
  if (fx.backend !== 'mysql') return;
  const [row] = await fx.query("SELECT running FROM pc_durable_task_control WHERE name = 'claims'");
  assert.equal(Number(row.running), await countRunning(fx), `${label}: the claims row counts the running tasks`);
}

for (const backend of BACKENDS) {
  describe(`the running count under the claim cap (${backend})`, () => {
    const claimers: StoreChild[] = [];
    const { fixtures } = processTestHooks(async () => {
      for (const c of claimers.splice(0)) await c.close();
    });
    async function fresh(pending: number): Promise<{ fx: BackendFixture; tasks: TaskStore }> {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      await createFixtureTables(fx);
      const tasks = new TaskStore(fx.store as BaseStore);
      await tasks.setCapacity(CAP);
      const input = (i: number) => ({ taskType: 'fx-quick', handlerVersion: 2, payload: { i }, timeoutMs: 60_000 });
      await tasks.submitBatch(Array.from({ length: pending }, (_, i) => input(i)));
      return { fx, tasks };
    }

    test('every way out of running frees exactly one slot; a write that keeps the task running frees none', async () => {
      const { fx, tasks } = await fresh(60);
      const held = new Map<number, ClaimedTask>();
      const take = async (label: string, expected: number) => {
        const got = await tasks.claimBatch('counter', LEASE, TEST_TASK_TYPES, 100);
        assert.equal(got.length, expected, `${label}: claims take ${expected} (took ${got.length})`);
        for (const t of got) held.set(t.taskId, t);
        assert.equal(await countRunning(fx), CAP, `${label}: the cap is full again`);
        await assertCountExact(fx, label);
      };
      const one = (): ClaimedTask => {
        const t = [...held.values()][0]!;
        held.delete(t.taskId);
        return t;
      };
      await take('first fill', CAP);

      // [label, slots freed, the write]
      const paths: Array<[string, number, (t: ClaimedTask) => Promise<unknown>]> = [
        ['pc_task_succeed', 1, (t) => tasks.succeed(t.taskId, t.attemptToken, { ok: 1 })],
        ['pc_task_complete in a transaction', 1, (t) => tasks.transaction((tx) => tasks.complete(t.taskId, t.attemptToken, null, tx))],
        [
          'pc_task_complete rolled back',
          0,
          async (t) => {
            await assert.rejects(
              tasks.transaction(async (tx) => {
                await tasks.complete(t.taskId, t.attemptToken, null, tx);
                throw new Error('the handler transaction fails after the success');
              }),
              /the handler transaction fails/,
            );
            held.set(t.taskId, t);
          },
        ],
        ['pc_task_succeed_batch without claims', 1, (t) => tasks.succeedBatch([{ taskId: t.taskId, attemptToken: t.attemptToken, resultJson: null }])],
        ['pc_task_fail', 1, (t) => tasks.fail(t.taskId, t.attemptToken, 'boom', 'failed on purpose')],
        [
          'pc_task_cancel (requested, still running), then pc_task_finish_cancelled',
          1,
          async (t) => {
            assert.equal((await tasks.cancel(t.taskId)).outcome, 'cancel_requested');
            assert.deepEqual(await tasks.claimBatch('counter', LEASE, TEST_TASK_TYPES, 100), [], 'a requested cancel keeps the slot');
            await tasks.finishCancelled(t.taskId, t.attemptToken);
          },
        ],
        [
          'pc_task_end_attempt requeue',
          1,
          (t) => tasks.endAttempt(t.taskId, t.attemptToken, { requeue: true, maxAttempts: 5, errorCode: 'x', errorMessage: 'x', workerExited: true }),
        ],
        [
          'pc_task_end_attempt fail',
          1,
          (t) => tasks.endAttempt(t.taskId, t.attemptToken, { requeue: false, maxAttempts: 5, errorCode: 'x', errorMessage: 'x', workerExited: true }),
        ],
        [
          'pc_task_record_verdict, heartbeat and progress (still running)',
          0,
          async (t) => {
            await tasks.recordVerdict(t.taskId, t.attemptToken, 'timeout');
            held.set(t.taskId, t);
            const other = [...held.values()].find((x) => x.taskId !== t.taskId)!;
            await tasks.heartbeat(other.taskId, other.attemptToken, LEASE);
            await tasks.progress(other.taskId, other.attemptToken, { current: 1, total: 2, message: 'half' }, 0);
          },
        ],
        [
          'a DBA ends a running task by hand (UPDATE)',
          1,
          (t) =>
            fx.query("UPDATE pc_durable_tasks SET state = 'failed', attempt_token = NULL, attempt_owner = NULL, lease_expires_at = NULL WHERE task_id = ?", [
              t.taskId,
            ]),
        ],
        ['a DBA deletes a running task (DELETE)', 1, (t) => fx.query('DELETE FROM pc_durable_tasks WHERE task_id = ?', [t.taskId])],
        [
          'a DBA puts a task back to pending (UPDATE)',
          1,
          (t) =>
            fx.query("UPDATE pc_durable_tasks SET state = 'pending', attempt_token = NULL, attempt_owner = NULL, lease_expires_at = NULL WHERE task_id = ?", [
              t.taskId,
            ]),
        ],
      ];
      for (const [label, frees, write] of paths) {
        await write(one());
        await take(label, frees);
      }
      // A group commit with claims: the slots its successes free are taken in the same transaction.
      const a = one();
      const b = one();
      const r = await tasks.succeedBatch(
        [
          { taskId: a.taskId, attemptToken: a.attemptToken, resultJson: '1' },
          { taskId: b.taskId, attemptToken: b.attemptToken, resultJson: '2' },
        ],
        { workerId: 'counter', leaseMs: LEASE, taskTypes: TEST_TASK_TYPES, maxCount: 5 },
      );
      assert.deepEqual(r.outcomes, ['succeeded', 'succeeded']);
      assert.equal(r.claimed.length, 2, 'two successes, two claims in their transaction');
      for (const t of r.claimed) held.set(t.taskId, t);
      await take('pc_task_succeed_batch with claims', 0);
      // A row inserted as running by hand (no operation does that; there is no insert trigger,
      // it would cost every submitted row) is counted once set-capacity recounts.
      const ended = one();
      await fx.query(
        'INSERT INTO pc_durable_tasks (task_type, handler_version, payload, state, timeout_ms, attempt_count, attempt_token, attempt_owner, lease_expires_at, heartbeat_at, started_at, created_at, updated_at) SELECT task_type, handler_version, payload, state, timeout_ms, attempt_count, ?, attempt_owner, lease_expires_at, heartbeat_at, started_at, created_at, updated_at FROM pc_durable_tasks WHERE task_id = ?',
        [crypto.randomUUID(), ended.taskId],
      );
      await fx.query("UPDATE pc_durable_tasks SET state = 'failed', attempt_token = NULL, attempt_owner = NULL, lease_expires_at = NULL WHERE task_id = ?", [
        ended.taskId,
      ]);
      await tasks.setCapacity(CAP);
      await take('an inserted running row holds a slot after set-capacity', 0);
    });

    test('a lease expired and requeued by the sweep frees its slot once', async () => {
      const { fx, tasks } = await fresh(10);
      const claimed = await tasks.claimBatch('sweeper', 1000, TEST_TASK_TYPES, 100);
      assert.equal(claimed.length, CAP);
      const lost = claimed[0]!;
      await waitLeaseExpired(tasks, lost.taskId);
      assert.equal(await tasks.expireLost(lost.taskId, lost.attemptToken, true), 'requeued');
      // A second sweep of the same attempt changes nothing.
      assert.notEqual(await tasks.expireLost(lost.taskId, lost.attemptToken, true), 'requeued');
      const again = await tasks.claimBatch('sweeper', LEASE, TEST_TASK_TYPES, 100);
      // The other two leases may have expired too, but they are still running: one slot only.
      assert.equal(again.length, 1, `one slot freed (took ${again.length})`);
      assert.equal(await countRunning(fx), CAP);
      await assertCountExact(fx, 'after the sweep');
    });

    test('racing processes claiming and completing leave the count exact and never pass the cap', async () => {
      const { fx, tasks } = await fresh(120);
      claimers.push(...[0, 1, 2, 3].map(() => new StoreChild(fx)));
      await Promise.all(claimers.map((c) => c.send('ping')));
      type Claim = { taskId: number; attemptToken: string };
      let peak = 0;
      for (let round = 0; round < 12; round += 1) {
        const perChild = await Promise.all(claimers.map((c, i) => c.send<Claim[]>('claimBatch', { workerId: `racer-${i}`, leaseMs: LEASE, maxCount: 2 })));
        const claims = perChild.flat();
        peak = Math.max(peak, await countRunning(fx));
        // Half end through the group commit, half through a failure, all at once.
        await Promise.all(
          claims.map((c, i) =>
            i % 2 === 0
              ? tasks.succeedBatch([{ taskId: c.taskId, attemptToken: c.attemptToken, resultJson: null }])
              : tasks.fail(c.taskId, c.attemptToken, 'x', 'x'),
          ),
        );
        await assertCountExact(fx, `round ${round}`);
      }
      assert.equal(peak, CAP, `the cap was used and never passed (peak ${peak})`);
      assert.equal(await countRunning(fx), 0);
      await assertCountExact(fx, 'at the end');
    });

    if (backend === 'mysql') {
      test('a heartbeat or progress write never waits for the claims row lock; an attempt that ends does', async () => {
        const { fx, tasks } = await fresh(10);
        const [t, u] = await tasks.claimBatch('locker', LEASE, TEST_TASK_TYPES, 2);
        const pool = (fx.store as unknown as { pool: import('mysql2/promise').Pool }).pool;
        const holder = await pool.getConnection();
        try {
          await holder.query('START TRANSACTION');
          await holder.query("SELECT capacity FROM pc_durable_task_control WHERE name = 'claims' FOR UPDATE");
          const within = <T>(p: Promise<T>, ms: number) =>
            Promise.race([p.then(() => 'done' as const), new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), ms).unref())]);
          assert.equal(await within(tasks.heartbeat(t!.taskId, t!.attemptToken, LEASE), 5000), 'done', 'a heartbeat does not wait');
          assert.equal(await within(tasks.progress(t!.taskId, t!.attemptToken, { current: 1 }, 0), 5000), 'done', 'progress does not wait');
          // The end of an attempt takes the count's lock: it waits for the claim holding it.
          const ending = tasks.succeed(u!.taskId, u!.attemptToken, null);
          ending.catch(() => undefined);
          await waitForBlockedStatement(fx); // positive evidence that it waits, not a pause
          assert.equal(await stillPending(ending), true, 'a success waits for the claims row');
          await holder.query('COMMIT');
          await ending;
        } finally {
          await holder.query('ROLLBACK').catch(() => undefined);
          holder.release();
        }
        await assertCountExact(fx, 'after the held lock');
      });

      test('migration 0028 counts the tasks already running, and the count follows them afterwards', async () => {
        const fx = await createBackend(backend, { migrate: false });
        fixtures.push(fx);
        const up = async (to?: string) => {
          const driver = await openMigrationDriver(fx.target);
          try {
            return await new Migrator(driver).up(to ? { to } : {});
          } finally {
            await driver.close();
          }
        };
        // A replayed chain installs today's procedure texts: the older release's claims are rows.
        await up('0027_grouped_task_successes');
        await createFixtureTables(fx);
        const tasks = new TaskStore(fx.store as BaseStore);
        await tasks.submitBatch(Array.from({ length: 6 }, (_, i) => ({ taskType: 'fx-quick', handlerVersion: 2, payload: { i }, timeoutMs: 60_000 })));
        await fx.query(
          "UPDATE pc_durable_tasks SET state = 'running', attempt_count = 1, attempt_token = UUID(), attempt_owner = 'old-release', heartbeat_at = UTC_TIMESTAMP(3), lease_expires_at = DATE_ADD(UTC_TIMESTAMP(3), INTERVAL 1 HOUR), started_at = UTC_TIMESTAMP(3) ORDER BY task_id LIMIT 3",
        );
        assert.ok((await up()).includes('0028_running_task_count'));
        await assertCountExact(fx, 'right after the migration');
        const [first] = await fx.query("SELECT task_id, attempt_token FROM pc_durable_tasks WHERE state = 'running' ORDER BY task_id LIMIT 1");
        await tasks.succeed(Number(first.task_id), String(first.attempt_token), null);
        assert.equal((await tasks.claimBatch('new-release', LEASE, TEST_TASK_TYPES, 5)).length, 2, 'the freed slot only (cap 4)');
        await assertCountExact(fx, 'after the first claims');
      });

      test('a dropped count trigger is drift: migrate status reports it and a task worker refuses to start', async () => {
        const { fx } = await fresh(1);
        await fx.query('DROP TRIGGER pc_dt_running_delete');
        const driver = await openMigrationDriver(fx.target);
        try {
          const status = await new Migrator(driver).status();
          assert.equal(status.drift, true);
          assert.deepEqual(
            status.triggers.map((t) => [t.name, t.state]),
            [
              ['pc_dt_running_delete', 'missing'],
              ['pc_dt_running_update', 'ok'],
            ],
          );
        } finally {
          await driver.close();
        }
        const r = await runCli(fx, ['tasks', 'worker'], { POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE: FIXTURE_TASKS_MODULE });
        assert.equal(r.code, 3, r.stderr);
        assert.match(r.stderr, /trigger pc_dt_running_delete missing/);
      });

      test('set-capacity recounts a running count changed by hand', async () => {
        const { fx, tasks } = await fresh(10);
        assert.equal((await tasks.claimBatch('fixer', LEASE, TEST_TASK_TYPES, 1)).length, 1);
        await fx.query("UPDATE pc_durable_task_control SET running = 50 WHERE name = 'claims'");
        assert.deepEqual(await tasks.claimBatch('fixer', LEASE, TEST_TASK_TYPES, 5), [], 'a count at the cap claims nothing');
        assert.equal(await tasks.hasPending(TEST_TASK_TYPES), false, 'the probe reads the same count');
        assert.deepEqual(await tasks.setCapacity(CAP), { previousCapacity: CAP, capacity: CAP, running: 1 });
        await assertCountExact(fx, 'after set-capacity');
        assert.equal(await tasks.hasPending(TEST_TASK_TYPES), true);
        assert.equal((await tasks.claimBatch('fixer', LEASE, TEST_TASK_TYPES, 5)).length, CAP - 1);
      });
    }
  });
}
