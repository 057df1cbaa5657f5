// SQLite's task state indexes (migration 0016): partial indexes, one per state its reads look
// for. Checked here:
// - every task read that filters by state is served by its index, never by a scan of the task
//   table (EXPLAIN QUERY PLAN of the scripts' own statements, over 20,000 finished tasks);
// - the write cost they exist for: the runner's group commit of 2 successes that claim 2 tasks
//   writes at most 8.5 WAL frames on average (10.6 with migration 0003's indexes, which also
//   held every finished task);
// - prune deletes the oldest finishes first and count_active reads both states under its cap.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type BetterSqlite3 from 'better-sqlite3';
import { loadSqliteScript } from '../../src/store/sqlite/script.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { createBackend, type BackendFixture } from '../helpers/backends.ts';

const FINISHED = 20_000;
const TYPES = ['noop'];

describe('SQLite task state indexes (migration 0016)', () => {
  let fx: BackendFixture;
  let db: BetterSqlite3.Database;
  let tasks: TaskStore;
  before(async () => {
    fx = await createBackend('sqlite');
    db = (fx.store as SqliteStore).db;
    tasks = new TaskStore(fx.store as never);
    await tasks.setCapacity(4);
  });
  after(async () => fx?.cleanup());

  /** The plan of each statement of sql/sqlite/<op>.sql as it runs (its parameters bound to 1). */
  function plans(op: string): string[] {
    return loadSqliteScript(op).statements.map((sql) => {
      const params = Object.fromEntries([...sql.matchAll(/(?<![:\w]):([A-Za-z_]\w*)/g)].map((m) => [m[1], 1]));
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    });
  }

  test('every task read by state is served by its partial index, not a scan of the task table', async () => {
    db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${FINISHED})
      INSERT INTO pc_durable_tasks (task_type, handler_version, payload, state, timeout_ms, attempt_count, finished_at)
      SELECT 'noop', 1, '{}', CASE i % 3 WHEN 0 THEN 'failed' ELSE 'succeeded' END, 60000, 1,
             strftime('%Y-%m-%d %H:%M:%f', 'now', '-' || (${FINISHED} - i) || ' seconds')
        FROM n`);
    await tasks.transaction(async (tx) => {
      await tasks.submitBatch(
        Array.from({ length: 50 }, (_, i) => ({ taskType: 'noop', handlerVersion: 1, payload: { i }, timeoutMs: 60_000 })),
        tx,
      );
    });
    await tasks.claimBatch('plans', 60_000, TYPES, 4);
    db.exec('ANALYZE');
    const expected: Record<string, string[]> = {
      pc_task_claim_batch: ['ix_pc_dt_pending', 'ix_pc_dt_running'],
      pc_task_succeed_batch: ['ix_pc_dt_pending', 'ix_pc_dt_running'],
      pc_task_probe_pending: ['ix_pc_dt_pending', 'ix_pc_dt_running'],
      pc_task_set_capacity: ['ix_pc_dt_running'],
      pc_task_list_lost: ['ix_pc_dt_running'],
      pc_task_count_active: ['ix_pc_dt_pending', 'ix_pc_dt_running'],
      pc_task_prune: ['ix_pc_dt_finished'],
    };
    for (const [op, indexes] of Object.entries(expected)) {
      const all = plans(op);
      const text = all.join(' | ');
      for (const plan of all) assert.doesNotMatch(plan, /SCAN pc_durable_tasks(?! USING)/, `${op} scans the task table: ${plan}`);
      for (const index of indexes) assert.match(text, new RegExp(`\\b${index}\\b`), `${op} uses ${index}: ${text}`);
    }
  });

  test('prune deletes the oldest finishes first; count_active counts both active states under its cap', async () => {
    const before = Number((await fx.query('SELECT COUNT(*) AS n FROM pc_durable_tasks'))[0]!.n);
    const oldest = await fx.query("SELECT task_id FROM pc_durable_tasks WHERE state IN ('succeeded', 'failed', 'cancelled') ORDER BY finished_at LIMIT 10");
    assert.equal(await tasks.prune(new Date(Date.now() + 3_600_000), 10), 10);
    const left = await fx.query(`SELECT COUNT(*) AS n FROM pc_durable_tasks WHERE task_id IN (${oldest.map((r) => Number(r.task_id)).join(',')})`);
    assert.equal(Number(left[0]!.n), 0, 'the ten oldest finishes went');
    assert.equal(Number((await fx.query('SELECT COUNT(*) AS n FROM pc_durable_tasks'))[0]!.n), before - 10);
    const all = await tasks.countActive(1000);
    assert.deepEqual(all.counts.map((c) => `${c.state}:${c.n}`).sort(), ['pending:46', 'running:4']);
    assert.equal(all.capped, false);
    const capped = await tasks.countActive(20);
    assert.equal(
      capped.counts.reduce((s, c) => s + c.n, 0),
      20,
    );
    assert.equal(capped.capped, true);
  });

  test('a group commit of 2 successes that claims 2 tasks writes at most 8.5 WAL frames on average', async () => {
    await tasks.transaction(async (tx) => {
      await tasks.submitBatch(
        Array.from({ length: 800 }, (_, i) => ({ taskType: 'noop', handlerVersion: 1, payload: { i }, timeoutMs: 60_000 })),
        tx,
      );
    });
    const running = await fx.query("SELECT task_id, attempt_token FROM pc_durable_tasks WHERE state = 'running' ORDER BY task_id");
    let items = running.map((r) => ({ taskId: Number(r.task_id), attemptToken: String(r.attempt_token) }));
    db.pragma('wal_autocheckpoint = 0');
    db.pragma('wal_checkpoint(TRUNCATE)');
    const wal = `${db.name}-wal`;
    const start = fs.statSync(wal).size;
    let commits = 0;
    while (items.length > 0 && commits < 400) {
      const batch = items.slice(0, 2);
      const { outcomes, claimed } = await tasks.succeedBatch(
        batch.map((t) => ({ ...t, resultJson: null })),
        { workerId: 'frames', leaseMs: 60_000, taskTypes: TYPES, maxCount: 2 },
      );
      assert.deepEqual(outcomes, ['succeeded', 'succeeded']);
      commits += 1;
      items = [...items.slice(2), ...claimed.map((c) => ({ taskId: c.taskId, attemptToken: c.attemptToken }))];
    }
    const frames = (fs.statSync(wal).size - Math.max(start, 32)) / ((db.pragma('page_size', { simple: true }) as number) + 24);
    db.pragma('wal_autocheckpoint = 1000');
    assert.equal(commits, 400);
    assert.ok(frames / commits <= 8.5, `${(frames / commits).toFixed(2)} WAL frames per group commit`);
  });
});
