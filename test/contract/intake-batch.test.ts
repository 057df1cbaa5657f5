/**
 * Batched intake (issue 12 item 4) on both backends: pc_aps_mark_dirty_batch,
 * pc_aps_accept_request_batch and pc_task_submit_batch give exactly the results of the same
 * single calls in order (repeated keys, dedupe keys repeated in one batch, pending_sequence
 * order), and share their in-transaction contract: a batch that fails midway in the SQL leaves
 * nothing, a batch inside a caller's transaction that rolls back leaves nothing, and the
 * maintenance window refuses the whole batch.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Pool } from 'mysql2/promise';
import { InvalidArgumentError, StoreError } from '../../src/store/errors.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import type { IntentSnapshot } from '../../src/store/types.ts';
import { TaskStore, type SubmitInput } from '../../src/tasks/task-store.ts';
import { submitBatchParams } from '../../src/tasks/submit-params.ts';
import { fixed, indexedList } from '../../src/store/intake-batch.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';

function code(expected: string) {
  return (error: unknown) => error instanceof StoreError && error.code === expected;
}

/** Generations of each item, and pending sequences as ranks (equal sequences compare equal). */
function shape(items: IntentSnapshot[]) {
  const seqs = [...new Set(items.map((i) => i.pendingSequence))].sort((a, b) => a - b);
  return items.map((i) => ({
    scopeId: i.scopeId,
    seqRank: seqs.indexOf(i.pendingSequence),
    dirty: i.dirtyGeneration,
    clean: i.cleanGeneration,
    requested: i.requestedGeneration,
    handled: i.handledGeneration,
    scan: i.lastAutoScanGeneration,
  }));
}

for (const backend of BACKENDS) {
  describe(`[${backend}] batched intake`, () => {
    let fx: BackendFixture;
    let store: BaseStore;
    let tasks: TaskStore;
    before(async () => {
      fx = await createBackend(backend);
      store = fx.store as BaseStore;
      tasks = new TaskStore(store);
    });
    after(async () => {
      await fx.cleanup();
    });

    async function count(sql: string, params: unknown[] = []): Promise<number> {
      const rows = await fx.query(sql, params);
      return Number(Object.values(rows[0])[0]);
    }

    for (const [kind, batch, singleCall] of [
      ['mark dirty', (b: string, s: string[]) => store.markDirtyBatch(b, s), (b: string, s: string) => store.markDirty(b, s)],
      ['accept request', (b: string, s: string[]) => store.acceptRequestBatch(b, s), (b: string, s: string) => store.acceptRequest(b, s)],
    ] as const) {
      test(`${kind}: a batch equals the same single calls in order (repeated keys, existing keys, registration order)`, async () => {
        const tag = kind.replace(' ', '-');
        const prepared = ['k2', 'k5'];
        for (const b of [`${tag}.batch`, `${tag}.single`]) {
          for (const s of prepared) {
            await store.markDirty(b, s);
            await store.acceptRequest(b, s);
          }
        }
        const keys = ['k1', 'k2', 'k1', 'k3', 'k,'.slice(0, 1) + '4', 'k1', 'k5', 'k2', 'k6'];
        const viaBatch = await batch(`${tag}.batch`, keys);
        const viaSingles: IntentSnapshot[] = [];
        for (const s of keys) viaSingles.push(await singleCall(`${tag}.single`, s));
        assert.deepEqual(shape(viaBatch), shape(viaSingles));
        assert.deepEqual(
          viaBatch.map((i) => i.scopeId),
          keys,
        );
        // And what the database holds afterwards is the same too.
        for (const s of new Set(keys)) {
          const a = await store.readIntent(`${tag}.batch`, s);
          const b = await store.readIntent(`${tag}.single`, s);
          assert.deepEqual({ ...a, bindingName: '', pendingSequence: 0 }, { ...b, bindingName: '', pendingSequence: 0 });
        }
      });
    }

    test('a repeated key is marked once per item, each item reporting its own generation', async () => {
      const r = await store.markDirtyBatch('dup', ['a', 'a', 'b', 'a']);
      assert.deepEqual(
        r.map((i) => [i.scopeId, i.dirtyGeneration]),
        [
          ['a', 1],
          ['a', 2],
          ['b', 1],
          ['a', 3],
        ],
      );
      assert.equal(r[0].pendingSequence, r[1].pendingSequence);
      assert.ok(r[2].pendingSequence > r[0].pendingSequence, 'b registers after a');
      assert.equal((await store.readIntent('dup', 'a'))!.dirtyGeneration, 3);
    });

    test('1000 keys in one call; 1001 refused before SQL and by the SQL itself', async () => {
      const keys = Array.from({ length: 1000 }, (_, i) => `s-${i}`);
      const r = await store.acceptRequestBatch('big', keys);
      assert.equal(r.length, 1000);
      assert.ok(r.every((i) => i.requestedGeneration === 1));
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_artifact_processing_intents WHERE binding_name = 'big'"), 1000);
      await assert.rejects(store.markDirtyBatch('big', [...keys, 'x']), InvalidArgumentError);
      const tooMany = indexedList([...keys, 'x']);
      await assert.rejects(
        store.callOperation('pc_aps_mark_dirty_batch', { binding_name: 'big', scope_ids: tooMany.text, scope_ends: tooMany.ends }),
        code('invalid_argument'),
      );
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_artifact_processing_intents WHERE binding_name = 'big' AND dirty_generation > 0"), 0);
    });

    test('a malformed item refuses the whole batch, earlier items included', async () => {
      await store.markDirty('mid', 'pre');
      // The empty third item (two equal ends) is refused; the items before it leave nothing.
      const list = { binding_name: 'mid', scope_ids: 'prenewlater', scope_ends: [3, 6, 6, 11].map((e) => fixed(e, 8)).join('') };
      await assert.rejects(store.callOperation('pc_aps_mark_dirty_batch', list), code('invalid_argument'));
      await assert.rejects(store.callOperation('pc_aps_accept_request_batch', list), code('invalid_argument'));
      const pre = await store.readIntent('mid', 'pre');
      assert.deepEqual([pre!.dirtyGeneration, pre!.requestedGeneration], [1, 0]);
      assert.equal(await store.readIntent('mid', 'new'), null);
      // Tasks: the third task's timeout is refused, the first two are not written.
      const params = submitBatchParams(
        [1, 2, 3].map((i) => ({ taskType: 'fx-quick', handlerVersion: 1, payload: { i }, dedupeKey: `mid-${i}`, timeoutMs: 1000 })),
      );
      params.timeouts_ms = [1000, 1000, 0].map((t) => fixed(t, 18)).join('');
      await assert.rejects(store.callOperation('pc_task_submit_batch', params), code('invalid_argument'));
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE dedupe_key LIKE 'mid-%'"), 0);
    });

    test('scope ids cut inside a character, ending in a space or too long are refused by the SQL', async () => {
      const cases = [
        // 'é' is two bytes: an end between them cuts it.
        { scope_ids: 'aéb', scope_ends: [2, 4].map((e) => fixed(e, 8)).join('') },
        { scope_ids: 'a b ', scope_ends: [2, 4].map((e) => fixed(e, 8)).join('') },
        { scope_ids: 'ab', scope_ends: [1, 1, 2].map((e) => fixed(e, 8)).join('') },
        { scope_ids: 'ab', scope_ends: fixed(1, 8) },
        { scope_ids: 'ab', scope_ends: `${fixed(1, 8)}0000002x` },
        { scope_ids: 'x'.repeat(192), scope_ends: fixed(192, 8) },
      ];
      for (const list of cases) {
        await assert.rejects(store.callOperation('pc_aps_mark_dirty_batch', { binding_name: 'cut', ...list }), code('invalid_argument'), JSON.stringify(list));
      }
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_artifact_processing_intents WHERE binding_name = 'cut'"), 0);
      // 191 characters of four bytes each are fine.
      const long = '😀'.repeat(191);
      const r = await store.markDirtyBatch('cut', [long, 'b', long]);
      assert.deepEqual(
        r.map((i) => [i.scopeId === long, i.dirtyGeneration]),
        [
          [true, 1],
          [false, 1],
          [true, 2],
        ],
      );
    });

    test('concurrent batches over the same keys in opposite orders, from two stores: no increment lost, none reported twice', async () => {
      const other = fx.openStore() as BaseStore;
      const keys = Array.from({ length: 120 }, (_, i) => `c-${i}`);
      // Half of the keys exist before, the other half are registered by the racing batches.
      await store.markDirtyBatch(
        'race',
        keys.filter((_, i) => i % 2 === 0),
      );
      const rounds = 4;
      const calls: Array<Promise<IntentSnapshot[]>> = [];
      for (let r = 0; r < rounds; r++) {
        calls.push(store.markDirtyBatch('race', keys), other.markDirtyBatch('race', [...keys].reverse()));
        calls.push(store.acceptRequestBatch('race', [...keys, keys[0]]), other.acceptRequestBatch('race', [...keys].reverse()));
      }
      const batches = await Promise.all(calls);
      for (const [i, key] of keys.entries()) {
        const intent = await store.readIntent('race', key);
        assert.equal(intent!.dirtyGeneration, 2 * rounds + (i % 2 === 0 ? 1 : 0), `${key}: dirty marks`);
        assert.equal(intent!.requestedGeneration, 2 * rounds + (i === 0 ? rounds : 0), `${key}: requests`);
      }
      // Every item reported the counter after its own step: no value reported twice for a key.
      const seen = new Map<string, number[]>();
      for (const [j, batch] of batches.entries()) {
        const dirty = j % 4 < 2;
        for (const x of batch) {
          const id = `${dirty ? 'dirty' : 'requested'} ${x.scopeId}`;
          (seen.get(id) ?? seen.set(id, []).get(id)!).push(dirty ? x.dirtyGeneration : x.requestedGeneration);
        }
      }
      for (const [id, values] of seen) assert.equal(new Set(values).size, values.length, `${id}: ${values.join(',')}`);
      const sequences = new Map<string, Set<number>>();
      for (const x of batches.flat()) (sequences.get(x.scopeId) ?? sequences.set(x.scopeId, new Set()).get(x.scopeId)!).add(x.pendingSequence);
      for (const [key, set] of sequences) assert.equal(set.size, 1, `${key}: registered once`);
    });

    test('two stores submitting the same dedupe keys while one transaction holds them: one task per key, the rest duplicates', async () => {
      const other = new TaskStore(fx.openStore() as BaseStore);
      const keyed = (tag: string) =>
        Array.from({ length: 20 }, (_, i) => ({ taskType: 'fx-quick', handlerVersion: 1, payload: { tag, i }, dedupeKey: `race-${i}`, timeoutMs: 1000 }));
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let first: Awaited<ReturnType<TaskStore['submitBatch']>> = [];
      // On MySQL the first batch holds its keys in an open transaction; SQLite has one writer at a
      // time (a second BEGIN IMMEDIATE in this process would wait on this very thread), so there
      // the two batches just run one after the other.
      const holder =
        backend === 'mysql'
          ? store.transaction(async (tx) => {
              first = await tasks.submitBatch(keyed('first'), tx);
              await held;
            })
          : tasks.submitBatch(keyed('first')).then((r) => {
              first = r;
            });
      await (backend === 'mysql' ? new Promise((resolve) => setTimeout(resolve, 100)) : holder);
      // The second batch (with tasks without a key between) waits on the first's uncommitted keys.
      const mixed = keyed('second').flatMap((t) => [t, { taskType: 'fx-quick', handlerVersion: 1, payload: { free: t.payload.i }, timeoutMs: 1000 }]);
      const second = other.submitBatch(mixed);
      await new Promise((resolve) => setTimeout(resolve, 300));
      release();
      await holder;
      const results = await second;
      assert.ok(first.every((r) => r.outcome === 'created'));
      assert.deepEqual(
        results.filter((_, j) => j % 2 === 0).map((r) => [r.outcome, r.taskId]),
        first.map((r) => ['duplicate', r.taskId]),
      );
      const free = results.filter((_, j) => j % 2 === 1);
      assert.ok(free.every((r) => r.outcome === 'created' && r.state === 'pending'));
      assert.equal(new Set(free.map((r) => r.taskId)).size, free.length);
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE dedupe_key LIKE 'race-%'"), 20);
      // No marker is left behind on a pending task.
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE state = 'pending' AND attempt_token IS NOT NULL"), 0);
      for (const [j, r] of free.entries()) assert.deepEqual((await tasks.read(r.taskId))!.payload, { free: j });
    });

    test("a batch inside the caller's transaction commits with it, and rolls back with it", async () => {
      await assert.rejects(
        store.transaction(async (tx) => {
          await store.markDirtyBatch('caller', ['x', 'y'], tx);
          await store.acceptRequestBatch('caller', ['x', 'z'], tx);
          await tasks.submitBatch([{ taskType: 'fx-quick', handlerVersion: 1, payload: {}, dedupeKey: 'caller-1', timeoutMs: 1000 }], tx);
          throw new Error('caller gives up');
        }),
        /caller gives up/,
      );
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_artifact_processing_intents WHERE binding_name = 'caller'"), 0);
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE dedupe_key = 'caller-1'"), 0);
      await store.transaction(async (tx) => {
        await store.markDirtyBatch('caller', ['x', 'y'], tx);
        await tasks.submitBatch([{ taskType: 'fx-quick', handlerVersion: 1, payload: {}, dedupeKey: 'caller-1', timeoutMs: 1000 }], tx);
      });
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_artifact_processing_intents WHERE binding_name = 'caller'"), 2);
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE dedupe_key = 'caller-1'"), 1);
    });

    test('the maintenance window refuses the whole batch', async () => {
      await store.setMaintenance(true);
      try {
        await assert.rejects(store.markDirtyBatch('maint', ['a', 'b']), code('maintenance'));
        await assert.rejects(store.acceptRequestBatch('maint', ['a']), code('maintenance'));
      } finally {
        await store.setMaintenance(false);
      }
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_artifact_processing_intents WHERE binding_name = 'maint'"), 0);
    });

    test('submit batch equals the same single submits: dedupe against active tasks and earlier items', async () => {
      const run = async (prefix: string, mode: 'batch' | 'single') => {
        // An active task holding key "<prefix>held" exists before.
        const held = await tasks.submit({ taskType: 'fx-quick', handlerVersion: 1, payload: { held: true }, dedupeKey: `${prefix}held`, timeoutMs: 1000 });
        const inputs: SubmitInput[] = [
          { taskType: 'fx-quick', handlerVersion: 1, payload: { n: 1 }, dedupeKey: `${prefix}a`, timeoutMs: 1000 },
          { taskType: 'fx-sleep', handlerVersion: 1, payload: { n: 2 }, dedupeKey: null, timeoutMs: 2000 },
          { taskType: 'fx-quick', handlerVersion: 1, payload: { n: 3 }, dedupeKey: `${prefix}a`, timeoutMs: 1000 },
          { taskType: 'fx-quick', handlerVersion: 1, payload: { n: 4 }, dedupeKey: `${prefix}held`, timeoutMs: 1000 },
          { taskType: 'fx-quick', handlerVersion: 1, payload: { n: 5 }, timeoutMs: 3000, resumedFromTaskId: held.taskId },
        ];
        const results =
          mode === 'batch'
            ? await tasks.submitBatch(inputs)
            : await Promise.all([]).then(async () => {
                const out = [];
                for (const input of inputs) out.push(await tasks.submit(input));
                return out;
              });
        // Task ids as references: "held", or the position of the item that created it.
        const created = results.map((r) => r.taskId);
        return results.map((r) => ({
          outcome: r.outcome,
          state: r.state,
          dedupeKey: r.dedupeKey?.slice(prefix.length) ?? null,
          ref: r.taskId === held.taskId ? 'held' : created.indexOf(r.taskId),
          ascending: true,
        }));
      };
      const batch = await run('B-', 'batch');
      const single = await run('S-', 'single');
      assert.deepEqual(batch, single);
      assert.deepEqual(
        batch.map((r) => r.outcome),
        ['created', 'created', 'duplicate', 'duplicate', 'created'],
      );
      assert.deepEqual(
        batch.map((r) => r.ref),
        [0, 1, 0, 'held', 4],
      );
      // Created ids ascend in list order, and the rows hold exactly the inputs.
      const rows = await fx.query(
        'SELECT task_id, task_type, handler_version, payload, timeout_ms, resumed_from_task_id, state FROM pc_durable_tasks WHERE payload LIKE \'{"n":%\' ORDER BY task_id',
      );
      const byRun = (from: number) =>
        rows.slice(from, from + 3).map((r) => ({ ...r, task_id: 0, resumed_from_task_id: r.resumed_from_task_id === null ? null : 1 }));
      assert.deepEqual(byRun(0), byRun(3));
      assert.deepEqual(
        rows.slice(0, 3).map((r) => JSON.parse(String(r.payload)).n),
        [1, 2, 5],
      );
    });

    test('payloads and dedupe keys with commas, colons, tildes and non-BMP characters round-trip', async () => {
      const odd = [
        { text: 'a,b:c~d', key: '12:,,~:' },
        { text: '日本語 😀 , 3:xyz', key: '😀😀:😀' },
        { text: '', key: '~' },
        { text: 'x'.repeat(5000), key: null },
      ];
      const results = await tasks.submitBatch(
        odd.map((o) => ({ taskType: 'fx-quick', handlerVersion: 1, payload: { text: o.text, list: [1, 2, 3] }, dedupeKey: o.key, timeoutMs: 1000 })),
      );
      assert.deepEqual(
        results.map((r) => r.outcome),
        ['created', 'created', 'created', 'created'],
      );
      for (let i = 0; i < odd.length; i++) {
        const task = await tasks.read(results[i].taskId);
        assert.deepEqual(task!.payload, { text: odd[i].text, list: [1, 2, 3] });
        assert.equal(task!.dedupeKey, odd[i].key);
      }
      // The same keys again dedupe to those tasks.
      const again = await tasks.submitBatch(
        odd.filter((o) => o.key).map((o) => ({ taskType: 'fx-quick', handlerVersion: 1, payload: {}, dedupeKey: o.key, timeoutMs: 1000 })),
      );
      assert.deepEqual(
        again.map((r) => [r.outcome, r.taskId]),
        results.slice(0, 3).map((r) => ['duplicate', r.taskId]),
      );
    });

    test('malformed lists are refused by the SQL with invalid_argument, nothing written', async () => {
      const good = submitBatchParams(
        [1, 2].map((i) => ({ taskType: 'fx-quick', handlerVersion: 1, payload: { bad: i }, dedupeKey: `bad-${i}`, timeoutMs: 1000 })),
      );
      const ends = (list: number[]) => list.map((e) => fixed(e, 8)).join('');
      const payloads = String(good.payloads);
      const cases: Array<Record<string, string>> = [
        { handler_versions: fixed(1, 10) },
        { timeouts_ms: fixed(1000, 18).repeat(3) },
        { handler_versions: `${fixed(1, 10)}${fixed(2147483648, 10)}` },
        { timeouts_ms: `${fixed(1000, 18)}${fixed(0, 18)}` },
        { payloads: `${payloads}x` },
        { payload_ends: ends([999, payloads.length]) },
        { payload_ends: ends([payloads.length, payloads.length - 1]) },
        { dedupe_key_ends: ends([0]) },
        { resumed_from_task_ids: `x${fixed(0, 17)}${fixed(0, 18)}` },
        { task_type_ends: ends([0, 16]) },
        { task_types: 'fx-quickfx-quicé', task_type_ends: ends([8, 16]) },
        { payloads: `é${payloads}`, payload_ends: ends([1, payloads.length + 2]) },
      ];
      for (const change of cases) {
        await assert.rejects(store.callOperation('pc_task_submit_batch', { ...good, ...change }), code('invalid_argument'), JSON.stringify(change));
      }
      assert.equal(await count("SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE dedupe_key LIKE 'bad-%'"), 0);
      await tasks.submitBatch([{ taskType: 'fx-quick', handlerVersion: 1, payload: {}, dedupeKey: 'bad-ok', timeoutMs: 1000 }]);
      await assert.rejects(tasks.submitBatch([]), InvalidArgumentError);
      await assert.rejects(tasks.submitBatch([{ taskType: 'fx-quick', handlerVersion: 1, payload: {}, timeoutMs: 0 }]), InvalidArgumentError);
    });

    if (backend === 'mysql') {
      // Issue 12 item 4: the result of a batch was read back through a join that walked every
      // pending task once per item without a key (100 items behind 3,000 pending tasks: 310,000
      // index reads, 0.4 s). A batch must cost O(batch) row reads whatever the backlog.
      test('a batch reads O(batch) rows whatever the pending backlog (InnoDB handler counters)', async () => {
        // A backlog of 3,000 pending tasks, written directly (the test says so: only its size matters).
        await fx.query(
          `INSERT INTO pc_durable_tasks (task_type, handler_version, payload, state, timeout_ms, created_at, updated_at)
           WITH RECURSIVE a(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM a WHERE x < 99),
                          c(y) AS (SELECT 0 UNION ALL SELECT y + 1 FROM c WHERE y < 29)
           SELECT 'fx-quick', 1, '{}', 'pending', 1000, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) FROM a CROSS JOIN c`,
        );
        const held = await tasks.submit({ taskType: 'fx-quick', handlerVersion: 1, payload: {}, dedupeKey: 'backlog-held', timeoutMs: 1000 });
        const inputs: SubmitInput[] = Array.from({ length: 100 }, (_, i) => ({
          taskType: 'fx-quick',
          handlerVersion: 1,
          payload: { backlog: i },
          dedupeKey: i === 10 ? 'backlog-new' : i === 20 ? 'backlog-held' : null,
          timeoutMs: 1000,
        }));
        const params = submitBatchParams(inputs);
        const names = Object.keys(params);
        const conn = await (store as unknown as { pool: Pool }).pool.getConnection();
        try {
          const counters = async () => {
            const [rows] = await conn.query("SHOW SESSION STATUS LIKE 'Handler_read%'");
            return (rows as Array<{ Value: string }>).reduce((sum, r) => sum + Number(r.Value), 0);
          };
          await conn.query('START TRANSACTION');
          const before = await counters();
          const [sets] = await conn.query(
            `CALL pc_task_submit_batch(${names.map(() => '?').join(', ')})`,
            names.map((n) => params[n]),
          );
          const reads = (await counters()) - before;
          const rows = (sets as unknown[]).find((x) => Array.isArray(x)) as Array<Record<string, unknown>>;
          await conn.query('ROLLBACK');
          assert.equal(rows.length, 100);
          assert.deepEqual(
            rows.map((r) => [r.outcome, r.state, r.dedupe_key]),
            inputs.map((input, i) => [i === 20 ? 'duplicate' : 'created', 'pending', input.dedupeKey]),
          );
          assert.equal(Number(rows[20]!.task_id), held.taskId);
          const created = rows.filter((_, i) => i !== 20).map((r) => Number(r.task_id));
          assert.ok(
            created.every((id, i) => i === 0 || id > created[i - 1]!),
            'created ids ascend in list order',
          );
          assert.ok(reads <= 20 * inputs.length, `a batch of ${inputs.length} read ${reads} rows behind a backlog of 3,000 (at most ${20 * inputs.length})`);
        } finally {
          conn.release();
        }
      });
    }
  });
}
