// The upgrade path of the durable-task domains (ADR: knowledge 1 -> 2, handler version 0, an
// unversioned baseline), on both backends: a database migrated to the migration before
// MySQL 0018 / SQLite 0010 holds realistic pre-upgrade rows (files the legacy pipeline left
// 'parsing'/'indexing' without a task, a file whose task failed without converging it, files of
// active tasks, settled files); `migrate up` converts, once, exactly the rows no attempt can own,
// records knowledge version 2 and the claim cap; legacy version 0 tasks of both reference types
// run their documented failure hooks. A fresh database records the current version too.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, afterEach, describe, test } from 'node:test';
import { openMigrationDriver } from '../../src/migrations/drivers.ts';
import { Migrator } from '../../src/migrations/migrator.ts';
import { MIGRATIONS_DIR } from '../../src/paths.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';
import { REFERENCE_TASKS_MODULE, isTerminal, makeRunner, waitForTask } from './harness.ts';
import type { TaskRunner } from '../../src/tasks/task-runner.ts';

const MINE = { sqlite: '0010_durable_task_cap', mysql: '0018_durable_task_cap' } as const;

/** The last migration before this upgrade (whatever other changes sort before it). */
function previousMigration(backend: 'sqlite' | 'mysql'): string {
  const dir = path.join(MIGRATIONS_DIR, backend === 'sqlite' ? 'sqlite' : 'oceanbase');
  const names = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.up.sql'))
    .map((f) => f.slice(0, -'.up.sql'.length))
    .sort();
  const before = names.filter((n) => n < MINE[backend]);
  assert.ok(names.includes(MINE[backend]) && before.length > 0);
  return before[before.length - 1];
}

async function migrate(fx: BackendFixture, to?: string): Promise<string[]> {
  const driver = await openMigrationDriver(fx.target);
  try {
    return await new Migrator(driver).up(to ? { to } : {});
  } finally {
    await driver.close();
  }
}

const NOW = (backend: string) => (backend === 'sqlite' ? "strftime('%Y-%m-%d %H:%M:%f', 'now')" : 'UTC_TIMESTAMP(3)');
const LATER = (backend: string) => (backend === 'sqlite' ? "strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 hour')" : 'DATE_ADD(UTC_TIMESTAMP(3), INTERVAL 1 HOUR)');

/** Pre-upgrade rows as the previous release (and the legacy pipeline before it) left them. */
async function preUpgradeData(fx: BackendFixture): Promise<{ running: number; pending: number; failed: number }> {
  const b = fx.backend;
  const task = async (state: string, extra: string, values: string, fileId: string) => {
    await fx.query(
      `INSERT INTO pc_durable_tasks (task_type, handler_version, payload, state, dedupe_key, timeout_ms${extra}) VALUES ('index-file', 1, ?, '${state}', ?, 600000${values})`,
      [JSON.stringify({ fileId }), state === 'failed' ? null : `index-file:${fileId}`],
    );
    return Number((await fx.query('SELECT MAX(task_id) AS id FROM pc_durable_tasks'))[0].id);
  };
  const running = await task(
    'running',
    ', attempt_count, attempt_token, attempt_owner, heartbeat_at, lease_expires_at, started_at',
    `, 1, '0123456789abcdef0123456789abcdef', 'tasks:old-worker', ${NOW(b)}, ${LATER(b)}, ${NOW(b)}`,
    'f-running',
  );
  const pending = await task('pending', ', attempt_count', ', 1', 'f-requeued');
  const failed = await task('failed', ', attempt_count, error_code, finished_at', `, 1, 'failure_hook_failed', ${NOW(b)}`, 'f-hook-gave-up');
  const files: Array<[string, string, number | null, string | null]> = [
    ['f-legacy-indexing', 'indexing', null, null], // the legacy pipeline recorded no task
    ['f-legacy-parsing', 'parsing', null, null],
    ['f-hook-gave-up', 'indexing', failed, '0123456789abcdef0123456789abcdee'], // its task failed without converging it
    ['f-ghost-owner', 'indexing', 987654, null], // a task id the table no longer has (pruned)
    ['f-running', 'indexing', running, '0123456789abcdef0123456789abcdef'],
    ['f-requeued', 'indexing', pending, null],
    ['f-indexed', 'indexed', null, null],
    ['f-uploaded', 'uploaded', null, null],
  ];
  for (const [id, state, owner, token] of files) {
    await fx.query('INSERT INTO ref_files (file_id, state, chunks, task_id, attempt_token) VALUES (?, ?, 2, ?, ?)', [id, state, owner, token]);
  }
  return { running, pending, failed };
}

async function files(fx: BackendFixture): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const r of await fx.query('SELECT file_id, state FROM ref_files ORDER BY file_id')) out[String(r.file_id)] = String(r.state);
  return out;
}

for (const backend of BACKENDS) {
  describe(`upgrade path of the durable-task domains (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    const runners: TaskRunner[] = [];
    afterEach(async () => {
      for (const r of runners.splice(0)) await r.stop();
    });
    after(async () => {
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });

    test('knowledge 1 -> 2 converts once the parsing/indexing rows no attempt can own, records version 2 and the cap', async () => {
      const fx = await createBackend(backend, { migrate: false });
      fixtures.push(fx);
      await migrate(fx, previousMigration(backend));
      const ids = await preUpgradeData(fx);
      const applied = await migrate(fx);
      assert.ok(applied.includes(MINE[backend]), applied.join(', '));
      assert.deepEqual(await files(fx), {
        'f-ghost-owner': 'error',
        'f-hook-gave-up': 'error',
        'f-indexed': 'indexed',
        'f-legacy-indexing': 'error',
        'f-legacy-parsing': 'parse_error',
        'f-requeued': 'indexing',
        'f-running': 'indexing',
        'f-uploaded': 'uploaded',
      });
      const converted = await fx.query('SELECT file_id, error FROM ref_files WHERE error IS NOT NULL ORDER BY file_id');
      assert.equal(converted.length, 4);
      for (const r of converted)
        assert.match(String(r.error), /^knowledge 1->2 upgrade: (parsing|indexing) was interrupted and no task attempt owns the file$/);
      // Rows of active tasks keep their owners; tasks are untouched.
      const owners = await fx.query("SELECT file_id, task_id FROM ref_files WHERE file_id IN ('f-running', 'f-requeued') ORDER BY file_id");
      assert.deepEqual(
        owners.map((r) => Number(r.task_id)),
        [ids.pending, ids.running],
      );
      assert.deepEqual(
        (await fx.query('SELECT state FROM pc_durable_tasks ORDER BY task_id')).map((r) => r.state),
        ['running', 'pending', 'failed'],
      );
      const versions = await fx.query('SELECT schema_name, version FROM pc_business_schema_versions');
      assert.deepEqual(
        versions.map((r) => [r.schema_name, Number(r.version)]),
        [['knowledge', 2]],
      );
      assert.equal(Number((await fx.query("SELECT capacity FROM pc_durable_task_control WHERE name = 'claims'"))[0].capacity), 4);
      // Once: a later migrate up has nothing to do and a row left 'indexing' afterwards is not converted by it.
      await fx.query("INSERT INTO ref_files (file_id, state) VALUES ('f-after', 'indexing')");
      assert.deepEqual(await migrate(fx), []);
      assert.equal((await files(fx))['f-after'], 'indexing');
    });

    test('an unversioned fresh database records the current version; legacy version 0 tasks of both types run their failure hooks', async () => {
      const fx = await createBackend(backend);
      fixtures.push(fx);
      const versions = await fx.query('SELECT schema_name, version FROM pc_business_schema_versions');
      assert.deepEqual(
        versions.map((r) => [r.schema_name, Number(r.version)]),
        [['knowledge', 2]],
      );
      const { tasks, runner } = await makeRunner(fx, {}, REFERENCE_TASKS_MODULE);
      runners.push(runner);
      // What the upgrade keeps: tasks of the legacy pipeline, marked version 0, with the rows they left.
      await fx.query("INSERT INTO ref_datasets (dataset_id, target_items, generated, state) VALUES ('ds-legacy', 10, 4, 'generating')");
      await fx.query("INSERT INTO ref_datasets (dataset_id, target_items, generated, state, task_id) VALUES ('ds-owned', 10, 4, 'generating', 424242)");
      const legacy = await tasks.submit({ taskType: 'generate-dataset', handlerVersion: 0, payload: { datasetId: 'ds-legacy', items: 10 }, timeoutMs: 60_000 });
      const owned = await tasks.submit({ taskType: 'generate-dataset', handlerVersion: 0, payload: { datasetId: 'ds-owned', items: 10 }, timeoutMs: 60_000 });
      await runner.start();
      for (const [t, id, state] of [
        [legacy, 'ds-legacy', 'failed'],
        [owned, 'ds-owned', 'generating'],
      ] as const) {
        const done = await waitForTask(tasks, t.taskId, isTerminal);
        assert.deepEqual([done.state, done.handlerVersion, done.errorCode], ['failed', 0, 'legacy_not_executable']);
        const row = (await fx.query('SELECT state, generated FROM ref_datasets WHERE dataset_id = ?', [id]))[0];
        assert.deepEqual([row.state, Number(row.generated)], [state, 4], `${id}: the legacy hook fails only a dataset no task owns`);
      }
    });
  });
}
