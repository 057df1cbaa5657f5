// Durable task operations on both backends, without a runner: submit order (T1), dedupe (T2),
// concurrent claims from several processes (T4), lease fencing and late owners (T5), cancel of a
// pending task (T7), timeout validation (T9), progress throttling (T10), and list/show/delete/
// prune (keyset pagination over more than 200 tasks). Runner and process-level behaviour is in
// runner.test.ts and processes.test.ts.
import assert from 'node:assert/strict';
import { after, afterEach, describe, test } from 'node:test';
import { ConfigError } from '../../src/config/database-url.ts';
import { tasksCommand, type TasksArgs } from '../../src/cli/tasks.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { AttemptLostError, InvalidArgumentError, StoreError } from '../../src/store/errors.ts';
import { txQuery } from '../../src/store/tx-query.ts';
import { parseTaskConfig } from '../../src/tasks/config.ts';
import { loadHostTaskRegistry } from '../../src/child/host-import.ts';
import { UnknownHandlerError } from '../../src/tasks/registry.ts';
import { TaskService } from '../../src/tasks/service.ts';
import { TaskStore, type SubmitResult } from '../../src/tasks/task-store.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { FIXTURE_TASKS_MODULE, StoreChild, insertRow, killChildren, rowState, settledWithin, waitLeaseExpired, waitForTask } from './harness.ts';
import { TEST_TASK_TYPES } from '../fixtures/tasks/types.ts';

const FOREIGN_TOKEN = '00000000-0000-0000-0000-000000000000';

function pick<T extends object>(value: T | null, keys: Array<keyof T>): Partial<T> {
  const out: Partial<T> = {};
  for (const k of keys) out[k] = value?.[k];
  return out;
}

async function serviceOn(tasks: TaskStore, limits = { maxTimeoutMs: 3_600_000, defaultTimeoutMs: 600_000 }): Promise<TaskService> {
  return new TaskService(tasks, await loadHostTaskRegistry(FIXTURE_TASKS_MODULE), limits);
}

function isAttemptLost(error: unknown): boolean {
  return error instanceof AttemptLostError && error.code === 'attempt_lost';
}

function storeCode(code: string) {
  return (error: unknown) => error instanceof StoreError && error.code === code;
}

/** `apsup tasks ...` in this process (same code path as the CLI), with its console output captured. */
async function apsupTasks(fx: BackendFixture, args: TasksArgs): Promise<{ code: number; out: string }> {
  const saved = { url: process.env.POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL, module: process.env.POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE };
  const log = console.log;
  const err = console.error;
  const out: string[] = [];
  process.env.POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL = fx.url;
  process.env.POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE = FIXTURE_TASKS_MODULE;
  console.log = (...a: unknown[]) => {
    out.push(a.join(' '));
  };
  console.error = (...a: unknown[]) => {
    out.push(a.join(' '));
  };
  try {
    const code = await tasksCommand(args);
    return { code, out: out.join('\n') };
  } finally {
    console.log = log;
    console.error = err;
    for (const [k, v] of [
      ['POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL', saved.url],
      ['POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE', saved.module],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

for (const backend of BACKENDS) {
  describe(`durable task store (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    const children: StoreChild[] = [];
    async function fresh(): Promise<{ fx: BackendFixture; tasks: TaskStore }> {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      return { fx, tasks: new TaskStore(fx.store as BaseStore) };
    }
    afterEach(async () => {
      await Promise.all(children.splice(0).map((c) => c.close()));
      killChildren();
    });
    after(async () => {
      killChildren();
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });

    test('T1 submit order: a task submitted in an open transaction is invisible and unclaimable for another process until it commits', async () => {
      const { fx, tasks } = await fresh();
      const child = new StoreChild(fx);
      children.push(child);
      await child.send('ping');
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      let submitted: SubmitResult | null = null;
      const domainTx = tasks.transaction(async (tx) => {
        submitted = await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 }, tx);
        await txQuery(tx, "INSERT INTO ref_files (file_id, state, task_id) VALUES ('t1-file', 'queued', ?)", [submitted.taskId]);
        await gate;
      });
      try {
        const mine = (await waitFor(() => submitted)) as SubmitResult;
        // Another connection does not see the row while the submitting transaction is open.
        const other = new TaskStore(fx.openStore() as BaseStore);
        assert.equal(await other.read(mine.taskId), null);
        const claimWhileOpen = child.send<Array<{ taskId: number; attemptCount: number } | null>>('claim', { workerId: 'w-other', leaseMs: 60_000 });
        const early = await settledWithin(claimWhileOpen, 700);
        if (backend === 'mysql') {
          // The claim neither sees the uncommitted row nor waits behind it (holding the claims row).
          assert.ok(early.settled, 'a claim must not wait for an uncommitted submission');
          assert.deepEqual(early.value, [null]);
        } else {
          // SQLite has one writer: the claim waits for the commit; it has not taken anything meanwhile.
          assert.equal(early.settled, false);
        }
        assert.equal(await other.read(mine.taskId), null);
        release();
        await domainTx;
        const claimed =
          backend === 'mysql'
            ? await child.send<Array<{ taskId: number; attemptCount: number } | null>>('claim', { workerId: 'w-other', leaseMs: 60_000 })
            : await claimWhileOpen;
        assert.equal(claimed[0]?.taskId, mine.taskId);
        assert.equal(claimed[0]?.attemptCount, 1);
        const row = await tasks.read(mine.taskId);
        assert.equal(row?.state, 'running');
        assert.equal(row?.attemptOwner, 'w-other');
      } finally {
        release();
        await domainTx.catch(() => undefined);
      }
    });

    test('T2 dedupe: one active task per key (also under concurrent submits and against a direct INSERT); terminal states release the key', async () => {
      const { fx, tasks } = await fresh();
      const service = await serviceOn(tasks);
      const a = await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'k1' } });
      assert.equal(a.outcome, 'created');
      assert.equal(a.dedupeKey, 'k1');
      const b = await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'k1', ms: 5 } });
      assert.deepEqual({ outcome: b.outcome, taskId: b.taskId, state: b.state }, { outcome: 'duplicate', taskId: a.taskId, state: 'pending' });
      const c = await service.submit({ taskType: 'fx-quick', payload: {}, dedupeKey: 'k1' });
      assert.deepEqual([c.outcome, c.taskId], ['duplicate', a.taskId]);

      // The database constraint itself refuses a second active row with the key.
      await assert.rejects(
        fx.query(
          "INSERT INTO pc_durable_tasks (task_type, handler_version, payload, state, dedupe_key, timeout_ms) VALUES ('fx-sleep', 1, '{}', 'pending', 'k1', 1000)",
        ),
        (e: { code?: string }) => ['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_UNIQUE'].includes(String(e.code)),
      );
      // ... also while the holder runs.
      const claimed = await tasks.claim('w1', 60_000, TEST_TASK_TYPES);
      assert.equal(claimed?.taskId, a.taskId);
      assert.equal((await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'k1' } })).taskId, a.taskId);
      await assert.rejects(
        fx.query(
          "INSERT INTO pc_durable_tasks (task_type, handler_version, payload, state, dedupe_key, timeout_ms) VALUES ('fx-sleep', 1, '{}', 'pending', 'k1', 1000)",
        ),
        (e: { code?: string }) => ['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_UNIQUE'].includes(String(e.code)),
      );

      if (backend === 'mysql') {
        // A domain transaction that got 'duplicate' and stays open does not stall the running
        // attempt of that task (its heartbeat locks the task row). (SQLite has one writer anyway.)
        let release!: () => void;
        const gate = new Promise<void>((r) => {
          release = r;
        });
        let dup: SubmitResult | null = null;
        const open = tasks.transaction(async (tx) => {
          dup = await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'k1' } }, tx);
          await gate;
        });
        try {
          await waitFor(() => dup);
          assert.equal(dup!.outcome, 'duplicate');
          const hb = await settledWithin(new TaskStore(fx.openStore() as BaseStore).heartbeat(a.taskId, claimed!.attemptToken, 60_000), 2000);
          assert.ok(hb.settled, 'the heartbeat did not wait for the submitting transaction');
        } finally {
          release();
          await open;
        }
      }

      // Concurrent submits with one key from several connections: exactly one task.
      const stores = [0, 1, 2, 3].map(() => new TaskStore(fx.openStore() as BaseStore));
      const results = await Promise.all(
        stores.flatMap((s) => [0, 1].map(() => s.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: {}, dedupeKey: 'k2', timeoutMs: 60_000 }))),
      );
      assert.equal(results.filter((r) => r.outcome === 'created').length, 1);
      assert.equal(new Set(results.map((r) => r.taskId)).size, 1);
      assert.equal(Number((await fx.query("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE dedupe_key = 'k2'"))[0].n), 1);
      await tasks.cancel(results[0].taskId);

      // Terminal states release the key: success ...
      await tasks.complete(a.taskId, claimed!.attemptToken, { done: true });
      const d = await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'k1' } });
      assert.equal(d.outcome, 'created');
      assert.notEqual(d.taskId, a.taskId);
      // ... cancellation ...
      assert.equal((await tasks.cancel(d.taskId)).outcome, 'cancelled');
      const e = await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'k1' } });
      assert.equal(e.outcome, 'created');
      // ... and failure.
      const ec = await tasks.claim('w1', 60_000, TEST_TASK_TYPES);
      assert.equal(ec?.taskId, e.taskId);
      await tasks.fail(e.taskId, ec!.attemptToken, 'boom', 'failed on purpose');
      const f = await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'k1' } });
      assert.equal(f.outcome, 'created');
      assert.equal(new Set([a.taskId, d.taskId, e.taskId, f.taskId]).size, 4);
      const rows = await fx.query("SELECT state FROM pc_durable_tasks WHERE dedupe_key = 'k1' ORDER BY task_id");
      assert.deepEqual(
        rows.map((r) => r.state),
        ['succeeded', 'cancelled', 'failed', 'pending'],
      );
    });

    test('T4 claim: 4 processes racing over 20 tasks never give one task to two claimers; running tasks are never claimed', async () => {
      const { fx, tasks } = await fresh();
      const ids: number[] = [];
      for (let i = 0; i < 20; i += 1) ids.push((await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: { i }, timeoutMs: 60_000 })).taskId);
      await tasks.setCapacity(1000); // this test is about atomicity, not the cap
      const claimers = [0, 1, 2, 3].map(() => new StoreChild(fx));
      children.push(...claimers);
      await Promise.all(claimers.map((c) => c.send('ping')));
      type Claim = { taskId: number; attemptToken: string; attemptCount: number } | null;
      const perChild = await Promise.all(claimers.map((c, i) => c.send<Claim[]>('claim', { workerId: `claimer-${i}`, leaseMs: 60_000, times: 8 })));
      const claims = perChild.flatMap((list, i) => list.filter((c): c is NonNullable<Claim> => c !== null).map((c) => ({ ...c, owner: `claimer-${i}` })));
      assert.equal(claims.length, 20, 'every task is claimed exactly once');
      assert.equal(new Set(claims.map((c) => c.taskId)).size, 20);
      assert.deepEqual(
        [...new Set(claims.map((c) => c.taskId))].sort((x, y) => x - y),
        ids,
      );
      assert.equal(new Set(claims.map((c) => c.attemptToken)).size, 20, 'attempt tokens are unique');
      for (const c of claims) {
        assert.equal(c.attemptCount, 1);
        const row = await tasks.read(c.taskId);
        assert.equal(row?.state, 'running');
        assert.equal(row?.attemptOwner, c.owner);
        assert.equal(row?.attemptToken, c.attemptToken);
      }
      // A duplicate wake-up finds nothing: running tasks are never taken again.
      assert.equal(await tasks.claim('late-claimer', 60_000, TEST_TASK_TYPES), null);
      // The cap is the database's and counts running tasks: 20 run, so a cap of 20 refuses and 21 admits.
      const extra = await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 });
      assert.deepEqual(await tasks.setCapacity(20), { previousCapacity: 1000, capacity: 20, running: 20 });
      assert.equal(await tasks.claim('late-claimer', 60_000, TEST_TASK_TYPES), null);
      await tasks.setCapacity(21);
      assert.equal((await tasks.claim('late-claimer', 60_000, TEST_TASK_TYPES))?.taskId, extra.taskId);
    });

    test('T5 lease: heartbeat extends it; a late owner is refused (attempt_lost) and leaves no trace; a new attempt fences the old token', async () => {
      const { fx, tasks } = await fresh();
      const { taskId } = await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: { rowId: 'f5' }, timeoutMs: 60_000 });
      await insertRow(fx, 'f5', 'indexing', taskId);
      const claim = await tasks.claim('w-late', 1000, TEST_TASK_TYPES);
      assert.equal(claim?.taskId, taskId);
      const token = claim!.attemptToken;
      const leaseMs = claim!.leaseExpiresAt.getTime() - claim!.dbNow.getTime();
      assert.ok(leaseMs >= 900 && leaseMs <= 1100, `lease ${leaseMs} ms from the database clock`);

      const hb = await tasks.heartbeat(taskId, token, 5000);
      assert.ok(hb.leaseExpiresAt.getTime() > claim!.leaseExpiresAt.getTime(), 'heartbeat extends the lease');
      assert.ok(Math.abs(hb.leaseExpiresAt.getTime() - hb.dbNow.getTime() - 5000) <= 5);
      assert.equal(hb.cancelRequested, false);
      assert.equal((await tasks.progress(taskId, token, { current: 1, total: 10, message: 'first' }, 1)).persisted, true);

      // A foreign token is refused even while the lease is live.
      for (const write of [
        () => tasks.heartbeat(taskId, FOREIGN_TOKEN, 5000),
        () => tasks.progress(taskId, FOREIGN_TOKEN, { current: 2 }, 1),
        () => tasks.complete(taskId, FOREIGN_TOKEN, { x: 1 }),
        () => tasks.succeed(taskId, FOREIGN_TOKEN, { x: 1 }),
        () => tasks.fail(taskId, FOREIGN_TOKEN, 'x', 'x'),
      ])
        await assert.rejects(write(), isAttemptLost);

      // Shorten the lease, never heartbeat again, and wait for expiry by the database clock.
      await tasks.heartbeat(taskId, token, 1000);
      await waitLeaseExpired(tasks, taskId);
      await assert.rejects(tasks.heartbeat(taskId, token, 5000), isAttemptLost);
      await assert.rejects(tasks.progress(taskId, token, { current: 5, message: 'late' }, 1), isAttemptLost);
      await assert.rejects(tasks.complete(taskId, token, { late: true }), isAttemptLost);
      await assert.rejects(tasks.succeed(taskId, token, { late: true }), isAttemptLost);
      await assert.rejects(tasks.fail(taskId, token, 'late', 'late'), isAttemptLost);
      await assert.rejects(tasks.finishCancelled(taskId, token), isAttemptLost);
      // A domain write and the terminal write in one transaction: both roll back.
      await assert.rejects(
        tasks.transaction(async (tx) => {
          await txQuery(tx, "UPDATE ref_files SET state = 'indexed' WHERE file_id = 'f5'");
          await tasks.complete(taskId, token, { late: true }, tx);
        }),
        isAttemptLost,
      );
      await assert.rejects(
        tasks.transaction(async (tx) => {
          await tasks.assertAttempt(tx, taskId, token);
          await txQuery(tx, "UPDATE ref_files SET state = 'indexed' WHERE file_id = 'f5'");
        }),
        isAttemptLost,
      );
      assert.equal(await rowState(fx, 'f5'), 'indexing');
      const after = await tasks.read(taskId);
      assert.equal(after?.state, 'running');
      assert.equal(after?.result, null);
      assert.equal(after?.progressCurrent, 1);
      assert.equal(after?.progressMessage, 'first');
      assert.equal(after?.attemptOwner, 'w-late');

      // The reconciler requeues (as for an idempotent type); the next attempt gets a new token.
      assert.equal(await tasks.expireLost(taskId, token, true), 'requeued');
      const second = await tasks.claim('w-new', 60_000, TEST_TASK_TYPES);
      assert.equal(second?.taskId, taskId);
      assert.equal(second?.attemptCount, 2);
      assert.notEqual(second?.attemptToken, token);
      await assert.rejects(tasks.complete(taskId, token, { late: true }), isAttemptLost);
      await assert.rejects(tasks.succeed(taskId, token, { late: true }), isAttemptLost);
      await tasks.succeed(taskId, second!.attemptToken, { fresh: true });
      const done = await tasks.read(taskId);
      assert.equal(done?.state, 'succeeded');
      assert.deepEqual(done?.result, { fresh: true });
      assert.equal(done?.attemptOwner, null);
      assert.equal(done?.leaseExpiresAt, null);
      // Expiry of an attempt that already ended changes nothing.
      assert.equal(await tasks.expireLost(taskId, second!.attemptToken, false), 'not_lost');
      assert.equal((await tasks.read(taskId))?.state, 'succeeded');
    });

    test('recovery operations: end_attempt and expire_lost decide cancel, bounded requeue and give-up under the row lock; probe_pending; readiness withdrawal', async () => {
      const { tasks } = await fresh();
      const sub = async () => (await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: {}, timeoutMs: 60_000 })).taskId;
      const claim = async (leaseMs = 60_000) => (await tasks.claim('w-rec', leaseMs, TEST_TASK_TYPES))!;
      const live = (requeue: boolean, maxAttempts: number, errorCode = 'worker_exited') => ({
        requeue,
        maxAttempts,
        errorCode,
        errorMessage: 'the worker process ended',
        workerExited: false,
      });
      assert.equal(await tasks.hasPending(TEST_TASK_TYPES), false);
      const a = await sub();
      assert.equal(await tasks.hasPending(TEST_TASK_TYPES), true);
      let c = await claim();
      assert.equal(await tasks.hasPending(TEST_TASK_TYPES), false);
      assert.equal(await tasks.endAttempt(a, c.attemptToken, live(true, 2)), 'requeued');
      assert.deepEqual(Object.values(pick(await tasks.read(a), ['state', 'attemptCount', 'attemptToken', 'attemptOwner'])), ['pending', 1, null, null]);
      await assert.rejects(tasks.endAttempt(a, c.attemptToken, live(true, 2)), isAttemptLost, 'fenced by the attempt token');
      c = await claim();
      assert.equal(await tasks.endAttempt(a, c.attemptToken, live(true, 2)), 'exhausted');
      assert.deepEqual(Object.values(pick(await tasks.read(a), ['state', 'errorCode', 'attemptCount', 'attemptOwner'])), [
        'failed',
        'retries_exhausted',
        2,
        null,
      ]);
      const b = await sub();
      c = await claim();
      assert.equal(await tasks.endAttempt(b, c.attemptToken, live(false, 5, 'interrupted_by_shutdown')), 'failed');
      assert.deepEqual(Object.values(pick(await tasks.read(b), ['state', 'errorCode', 'errorMessage'])), [
        'failed',
        'interrupted_by_shutdown',
        'the worker process ended',
      ]);
      const d = await sub();
      c = await claim();
      assert.equal((await tasks.cancel(d)).outcome, 'cancel_requested');
      assert.equal(await tasks.endAttempt(d, c.attemptToken, live(true, 5)), 'cancelled', 'the cancel intent wins over a requeue');
      assert.equal((await tasks.read(d))?.state, 'cancelled');
      // Expired leases.
      const e = await sub();
      c = await claim(1000);
      await tasks.cancel(e);
      await waitLeaseExpired(tasks, e);
      assert.equal(await tasks.expireLost(e, c.attemptToken, true, undefined, { maxAttempts: 5 }), 'cancelled');
      assert.deepEqual(Object.values(pick(await tasks.read(e), ['state', 'attemptCount', 'attemptOwner'])), ['cancelled', 1, null]);
      const f = await sub();
      c = await claim(1000);
      await waitLeaseExpired(tasks, f);
      assert.equal(await tasks.expireLost(f, c.attemptToken, true, undefined, { maxAttempts: 1 }), 'exhausted');
      assert.deepEqual(Object.values(pick(await tasks.read(f), ['state', 'errorCode'])), ['failed', 'retries_exhausted']);
      const g = await sub();
      c = await claim(1000);
      await waitLeaseExpired(tasks, g);
      assert.equal(await tasks.expireLost(g, c.attemptToken, true, undefined, { maxAttempts: 5, giveUp: true }), 'gave_up');
      assert.deepEqual(Object.values(pick(await tasks.read(g), ['state', 'errorCode', 'attemptOwner'])), ['failed', 'failure_hook_failed', null]);
      assert.equal(await tasks.expireLost(g, c.attemptToken, false), 'not_lost');
      await assert.rejects(tasks.expireLost(g, c.attemptToken, true, undefined, { maxAttempts: 0 }), InvalidArgumentError);
      // Readiness: a clean stop withdraws the fact at once.
      await tasks.publishReadiness('tasks:rec', 60_000);
      assert.equal((await tasks.readReadiness()).liveWorkers, 1);
      assert.equal(await tasks.withdrawReadiness('tasks:rec'), true);
      assert.equal((await tasks.readReadiness()).liveWorkers, 0);
      assert.equal(await tasks.withdrawReadiness('tasks:rec'), false);
    });

    test('T7 cancel: a pending task cancels at once and releases its key; a running one records the intent for its control points', async () => {
      const { tasks } = await fresh();
      const service = await serviceOn(tasks);
      const a = await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'c1' } });
      assert.deepEqual(await tasks.cancel(a.taskId), { state: 'cancelled', outcome: 'cancelled' });
      const ra = await tasks.read(a.taskId);
      assert.equal(ra?.state, 'cancelled');
      assert.equal(ra?.cancelRequested, true);
      assert.equal(ra?.attemptCount, 0);
      assert.ok(ra?.finishedAt);
      assert.equal((await tasks.cancel(a.taskId)).outcome, 'already_terminal');
      assert.equal(await tasks.claim('w1', 60_000, TEST_TASK_TYPES), null, 'a cancelled task is never claimed');

      const b = await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'c1' } });
      assert.equal(b.outcome, 'created');
      const claim = await tasks.claim('w1', 60_000, TEST_TASK_TYPES);
      assert.equal(claim?.taskId, b.taskId);
      assert.deepEqual(await tasks.cancel(b.taskId), { state: 'running', outcome: 'cancel_requested' });
      const rb = await tasks.read(b.taskId);
      assert.equal(rb?.state, 'running');
      assert.equal(rb?.cancelRequested, true);
      assert.equal((await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'c1' } })).outcome, 'duplicate');
      assert.equal((await tasks.heartbeat(b.taskId, claim!.attemptToken, 60_000)).cancelRequested, true);
      assert.equal((await tasks.progress(b.taskId, claim!.attemptToken, { current: 1 }, 1)).cancelRequested, true);
      await tasks.finishCancelled(b.taskId, claim!.attemptToken);
      const done = await tasks.read(b.taskId);
      assert.equal(done?.state, 'cancelled');
      assert.equal(done?.errorCode, 'cancelled');
      assert.equal(done?.attemptOwner, null);
      assert.equal((await service.submit({ taskType: 'fx-sleep', payload: { dedupe: 'c1' } })).outcome, 'created');

      // finish_cancelled without a cancel intent is refused; unknown tasks are reported.
      const c = await tasks.claim('w1', 60_000, TEST_TASK_TYPES);
      await assert.rejects(tasks.finishCancelled(c!.taskId, c!.attemptToken), (e: unknown) => e instanceof InvalidArgumentError);
      await assert.rejects(tasks.cancel(999_999), storeCode('task_not_found'));
    });

    test('T9 timeouts: positive and finite; the worker maximum is configurable beyond 24 h; a task may lower it, never raise it', async () => {
      const defaults = parseTaskConfig({});
      assert.ok(defaults.maxTimeoutMs > 24 * 3600 * 1000, 'default worker maximum exceeds 24 h');
      assert.equal(defaults.warmWorkers, defaults.capacity, 'every slot has a process started ahead of need by default');
      const W = 'POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_';
      assert.equal(parseTaskConfig({ [`${W}CAPACITY`]: '8', [`${W}WARM_WORKERS`]: '0' }).warmWorkers, 0);
      assert.throws(() => parseTaskConfig({ [`${W}CAPACITY`]: '2', [`${W}WARM_WORKERS`]: '3' }), /WARM_WORKERS must not exceed .*CAPACITY \(2\)/);
      assert.throws(() => parseTaskConfig({ [`${W}WARM_WORKERS`]: '-1' }), ConfigError);
      assert.equal(defaults.defaultTimeoutMs, defaults.maxTimeoutMs, 'a task that does not lower its timeout runs under the worker maximum');
      assert.equal(
        parseTaskConfig({ POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_MAX_TIMEOUT_SECONDS: '200000' }).defaultTimeoutMs,
        200_000_000,
        'the default follows a configured maximum',
      );
      assert.equal(parseTaskConfig({ POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_MAX_TIMEOUT_SECONDS: '200000' }).maxTimeoutMs, 200_000_000);
      for (const bad of ['0', '-1', 'Infinity', 'NaN', 'abc']) {
        assert.throws(() => parseTaskConfig({ POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_MAX_TIMEOUT_SECONDS: bad }), ConfigError, `MAX_TIMEOUT_SECONDS=${bad}`);
        assert.throws(
          () => parseTaskConfig({ POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_DEFAULT_TIMEOUT_SECONDS: bad }),
          ConfigError,
          `DEFAULT_TIMEOUT_SECONDS=${bad}`,
        );
      }
      assert.throws(
        () =>
          parseTaskConfig({
            POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_MAX_TIMEOUT_SECONDS: '60',
            POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_DEFAULT_TIMEOUT_SECONDS: '61',
          }),
        ConfigError,
      );
      // Settings the operations would refuse at every claim are refused at start-up instead.
      assert.throws(() => parseTaskConfig({ POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_LEASE_SECONDS: '7200' }), ConfigError);
      assert.throws(() => parseTaskConfig({ POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_READINESS_TTL_SECONDS: '3600' }), ConfigError);
      // Timer settings stay inside the Node timer range (a larger delay would fire at once).
      for (const [name, bad] of [
        ['SWEEP_SECONDS', '0.01'],
        ['SWEEP_SECONDS', '3000000'],
        ['TERMINATE_GRACE_SECONDS', '3000000'],
        ['WAKEUP_POLL_MS', '10'],
        ['MAX_ATTEMPTS', '0'],
        ['MAX_ATTEMPTS', '1.5'],
        ['FAILURE_HOOK_MAX_ATTEMPTS', '0'],
      ]) {
        assert.throws(() => parseTaskConfig({ [`POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_${name}`]: bad }), ConfigError, `${name}=${bad}`);
      }

      const { fx, tasks } = await fresh();
      const service = await serviceOn(tasks, parseTaskConfig({ POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_MAX_TIMEOUT_SECONDS: '10' }));
      for (const bad of [0, -1, Infinity, -Infinity, NaN]) {
        await assert.rejects(service.submit({ taskType: 'fx-quick', payload: {}, timeoutMs: bad }), InvalidArgumentError, `timeout ${bad}`);
        await assert.rejects(
          tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: bad }),
          InvalidArgumentError,
          `store timeout ${bad}`,
        );
      }
      await assert.rejects(service.submit({ taskType: 'fx-quick', payload: {}, timeoutMs: 10_001 }), /exceeds the worker maximum/);
      // The database refuses non-positive timeouts on its own as well.
      await assert.rejects(
        (fx.store as BaseStore).callOperation('pc_task_submit', {
          task_type: 'fx-quick',
          handler_version: 2,
          payload: '{}',
          dedupe_key: null,
          timeout_ms: 0,
          resumed_from_task_id: null,
        }),
        (e: unknown) => e instanceof InvalidArgumentError,
      );
      const lowered = await service.submit({ taskType: 'fx-quick', payload: {}, timeoutMs: 1_500 });
      assert.equal((await tasks.read(lowered.taskId))?.timeoutMs, 1_500);
      const atMax = await service.submit({ taskType: 'fx-quick', payload: {}, timeoutMs: 10_000 });
      assert.equal((await tasks.read(atMax.taskId))?.timeoutMs, 10_000);
      const byDefault = await service.submit({ taskType: 'fx-quick', payload: {} });
      assert.equal((await tasks.read(byDefault.taskId))?.timeoutMs, 10_000, 'no timeout given: the worker maximum');
      assert.equal(Number((await fx.query('SELECT COUNT(*) AS n FROM pc_durable_tasks'))[0].n), 3, 'refused submissions wrote nothing');
    });

    test('T3 submit refuses unknown handler versions and types, and imports no handler module', async () => {
      const { fx, tasks } = await fresh();
      const service = await serviceOn(tasks);
      await assert.rejects(
        service.submit({ taskType: 'fx-quick', payload: {}, handlerVersion: 7 }),
        (e: unknown) => e instanceof UnknownHandlerError && e.code === 'unknown_handler_version' && /version 7/.test(e.message),
      );
      await assert.rejects(
        service.submit({ taskType: 'fx-quick', payload: {}, handlerVersion: Number.NaN }),
        (e: unknown) => e instanceof UnknownHandlerError && e.code === 'unknown_handler_version',
      );
      await assert.rejects(
        service.submit({ taskType: 'no-such-type', payload: {} }),
        (e: unknown) => e instanceof UnknownHandlerError && e.code === 'unknown_task_type',
      );
      await assert.rejects(service.submit({ taskType: 'fx-quick', payload: { nope: true } }), /payload of fx-quick is invalid/);
      assert.equal(Number((await fx.query('SELECT COUNT(*) AS n FROM pc_durable_tasks'))[0].n), 0);
      const old = await service.submit({ taskType: 'fx-quick', payload: {}, handlerVersion: 1 });
      const current = await service.submit({ taskType: 'fx-quick', payload: {} });
      assert.equal((await tasks.read(old.taskId))?.handlerVersion, 1);
      assert.equal((await tasks.read(current.taskId))?.handlerVersion, 2);
      assert.equal(service.registry.isLoaded('fx-quick', 1) || service.registry.isLoaded('fx-quick', 2), false);
    });

    test('T10 progress: numbers are throttled by the minimum step (or reaching the total); a new message is always persisted', async () => {
      const { tasks } = await fresh();
      const { taskId } = await tasks.submit({ taskType: 'fx-sleep', handlerVersion: 1, payload: {}, timeoutMs: 60_000 });
      const { attemptToken: tok } = (await tasks.claim('w1', 60_000, TEST_TASK_TYPES))!;
      const step = async (current: number | null, total: number | null, message: string | null) => {
        const r = await tasks.progress(taskId, tok, { current, total, message }, 10);
        const t = await tasks.read(taskId);
        return [r.persisted, t?.progressCurrent, t?.progressTotal, t?.progressMessage];
      };
      assert.deepEqual(await step(1, 20, 'start'), [true, 1, 20, 'start']);
      assert.deepEqual(await step(5, 20, null), [false, 1, 20, 'start'], 'an increment below the step is throttled');
      assert.deepEqual(await step(6, 20, 'phase two'), [true, 6, 20, 'phase two'], 'a new message is persisted despite the throttle');
      assert.deepEqual(await step(7, 20, 'phase two'), [false, 6, 20, 'phase two'], 'the same message is not new');
      assert.deepEqual(await step(15, 20, null), [false, 6, 20, 'phase two']);
      assert.deepEqual(await step(16, 20, null), [true, 16, 20, 'phase two'], 'an increment of the step is persisted');
      assert.deepEqual(await step(20, 20, null), [true, 20, 20, 'phase two'], 'reaching the total is persisted');
      assert.deepEqual(await step(null, null, 'finishing'), [true, 20, 20, 'finishing']);
      assert.deepEqual(await step(null, null, 'finishing'), [false, 20, 20, 'finishing']);
      await assert.rejects(tasks.progress(taskId, tok, { current: Number.NaN }, 10), InvalidArgumentError);
      await assert.rejects(tasks.progress(taskId, tok, { current: 1 }, -1), InvalidArgumentError);
    });

    test('list pages more than 200 tasks by keyset (each exactly once, newest first); show, delete and prune', async () => {
      const { fx, tasks } = await fresh();
      const ids: number[] = [];
      for (let i = 0; i < 205; i += 1) ids.push((await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: { i }, timeoutMs: 60_000 })).taskId);
      const cancelled = ids.filter((_, i) => i % 7 === 0);
      for (const id of cancelled) await tasks.cancel(id);
      const seen: number[] = [];
      const sizes: number[] = [];
      let before: number | null = null;
      for (let page = 0; page < 10; page += 1) {
        const r = await tasks.list({ beforeTaskId: before, limit: 50 });
        sizes.push(r.tasks.length);
        seen.push(...r.tasks.map((t) => t.taskId));
        if (r.nextBeforeTaskId === null) break;
        before = r.nextBeforeTaskId;
      }
      assert.deepEqual(sizes.slice(0, 5), [50, 50, 50, 50, 5]);
      assert.deepEqual(seen, [...ids].reverse(), 'every task exactly once, newest first');
      const cancelledPage = await tasks.list({ state: 'cancelled', limit: 1000 });
      assert.deepEqual(
        cancelledPage.tasks.map((t) => t.taskId),
        [...cancelled].reverse(),
      );
      assert.equal(cancelledPage.nextBeforeTaskId, null);
      // The CLI pages the same way.
      const cli = await apsupTasks(fx, { positionals: ['list'], limit: '50', before: String(ids[60]), json: true });
      assert.equal(cli.code, 0);
      const cliPage = JSON.parse(cli.out) as { tasks: Array<{ taskId: number }>; nextBeforeTaskId: number };
      assert.deepEqual(
        cliPage.tasks.map((t) => t.taskId),
        ids.slice(10, 60).reverse(),
      );
      assert.equal(cliPage.nextBeforeTaskId, ids[10]);
      // The text hint for the next page keeps the filter and the page size.
      const text = await apsupTasks(fx, { positionals: ['list'], limit: '2', state: 'cancelled' });
      assert.match(text.out, new RegExp(`more: apsup tasks list --before ${[...cancelled].reverse()[1]} --state cancelled --limit 2$`, 'm'));

      // show: state, progress, message, attempts, owner, timestamps, result or error.
      const running = await tasks.claim('w-show', 60_000, TEST_TASK_TYPES);
      await tasks.progress(running!.taskId, running!.attemptToken, { current: 3, total: 9, message: 'a third' }, 1);
      const shown = await tasks.read(running!.taskId);
      assert.equal(shown?.state, 'running');
      assert.deepEqual([shown?.progressCurrent, shown?.progressTotal, shown?.progressMessage], [3, 9, 'a third']);
      assert.equal(shown?.attemptCount, 1);
      assert.equal(shown?.attemptOwner, 'w-show');
      for (const at of [shown?.createdAt, shown?.startedAt, shown?.heartbeatAt, shown?.leaseExpiresAt, shown?.updatedAt]) assert.ok(at instanceof Date);
      assert.equal(shown?.finishedAt, null);
      await tasks.complete(running!.taskId, running!.attemptToken, { answer: 42 });
      const failing = await tasks.claim('w-show', 60_000, TEST_TASK_TYPES);
      await tasks.fail(failing!.taskId, failing!.attemptToken, 'parse_error', 'chunk 3 could not be parsed');
      const shownOk = await apsupTasks(fx, { positionals: ['show', String(running!.taskId)] });
      assert.equal(shownOk.code, 0);
      const ok = JSON.parse(shownOk.out);
      assert.equal(ok.state, 'succeeded');
      assert.deepEqual(ok.result, { answer: 42 });
      assert.equal(ok.attemptCount, 1);
      assert.equal(ok.attemptOwner, null);
      assert.equal(ok.progressMessage, 'a third');
      assert.ok(ok.startedAt && ok.finishedAt && ok.createdAt);
      const bad = JSON.parse((await apsupTasks(fx, { positionals: ['show', String(failing!.taskId)] })).out);
      assert.deepEqual([bad.state, bad.errorCode, bad.errorMessage], ['failed', 'parse_error', 'chunk 3 could not be parsed']);
      assert.equal((await apsupTasks(fx, { positionals: ['show', '999999'] })).code, 1);

      // delete refuses active tasks and deletes terminal ones.
      const pending = (await tasks.list({ state: 'pending', limit: 1 })).tasks[0].taskId;
      const another = await tasks.claim('w-del', 60_000, TEST_TASK_TYPES);
      for (const active of [pending, another!.taskId]) {
        await assert.rejects(tasks.delete(active), storeCode('task_active'));
        assert.ok(await tasks.read(active));
      }
      const refused = await apsupTasks(fx, { positionals: ['delete', String(pending)] });
      assert.deepEqual([refused.code, refused.out], [1, 'apsup: pc_task_delete: task active']);
      await tasks.delete(running!.taskId);
      assert.equal(await tasks.read(running!.taskId), null);
      const viaCli = await apsupTasks(fx, { positionals: ['delete', String(failing!.taskId)] });
      assert.equal(viaCli.code, 0);
      assert.equal(await tasks.read(failing!.taskId), null);
      await assert.rejects(tasks.delete(999_999), storeCode('task_not_found'));
    });

    test('prune deletes only terminal tasks that finished before the cutoff', async () => {
      const { tasks } = await fresh();
      const submit = async () => (await tasks.submit({ taskType: 'fx-quick', handlerVersion: 2, payload: {}, timeoutMs: 60_000 })).taskId;
      const oldDone = await submit();
      await tasks.cancel(oldDone);
      const oldFinished = (await tasks.read(oldDone))!.finishedAt!;
      // The cutoff is a database time strictly after the old task finished and before the new one.
      const cutoff = (await waitForTask(tasks, oldDone, (t) => t.dbNow.getTime() > oldFinished.getTime())).dbNow;
      await waitForTask(tasks, oldDone, (t) => t.dbNow.getTime() > cutoff.getTime());
      const newDone = await submit();
      await tasks.cancel(newDone);
      const pendingOld = await submit();
      const runningOne = await submit();
      const c = await tasks.claim('w-prune', 60_000, TEST_TASK_TYPES);
      assert.equal(c?.taskId, pendingOld); // oldest pending first
      assert.equal(await tasks.prune(cutoff), 1);
      assert.equal(await tasks.read(oldDone), null);
      for (const id of [newDone, pendingOld, runningOne]) assert.ok(await tasks.read(id), `task ${id} kept`);
      const now = (await tasks.read(newDone))!.dbNow;
      assert.equal(await tasks.prune(new Date(now.getTime() + 3_600_000)), 1, 'active tasks are never pruned');
      assert.equal(await tasks.read(newDone), null);
      assert.deepEqual((await tasks.list()).tasks.map((t) => t.state).sort(), ['pending', 'running']);
    });
  });
}
