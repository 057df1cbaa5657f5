// MySQL/OceanBase as a DBA sees it (MariaDB here): every procedure carries a one-line COMMENT
// (from its file's Purpose header) and SQL SECURITY DEFINER; ops/mysql-grants.sql, run as it is,
// gives an owner that can migrate and a runtime account with EXECUTE only (plus the demo tables)
// that runs the supervisor and durable tasks end to end and cannot write a fence table directly.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl } from '../../src/config/database-url.ts';
import { listProcedureFiles, procedureText } from '../../src/migrations/catalog.ts';
import { openMigrationDriver } from '../../src/migrations/drivers.ts';
import { Migrator } from '../../src/migrations/migrator.ts';
import { procedureComment } from '../../src/migrations/procedure-characteristics.ts';
import { OPERATIONS, type OperationSpec } from '../../src/store/operations.ts';
import { MIGRATIONS_DIR } from '../../src/paths.ts';
import { MysqlStore } from '../../src/store/mysql/mysql-store.ts';
import { appendTopicSource, topicMemory } from '../../src/families/topic-memory.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { createBackend, MYSQL_TEST_URL, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { startRuntime } from '../fixtures/runtime-harness.ts';
import { grantScript, ROLES, userFor } from '../helpers/grants-script.ts';
import { requireMigratedSchema } from '../../src/cli/schema-check.ts';
import { REFERENCE_TASKS_MODULE, makeRunner, waitForTask, isTerminal } from '../tasks/harness.ts';

async function routines(fx: BackendFixture): Promise<Array<{ name: string; comment: string; security: string; definer: string }>> {
  const rows = await fx.query(
    "SELECT ROUTINE_NAME AS name, ROUTINE_COMMENT AS c, SECURITY_TYPE AS s, DEFINER AS d FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'PROCEDURE' ORDER BY ROUTINE_NAME",
  );
  return rows.map((r) => ({ name: String(r.name), comment: String(r.c ?? ''), security: String(r.s), definer: String(r.d) }));
}

const expectedComment = (name: string) => procedureComment(name, procedureText(name));
const migrationProcedures = () => listProcedureFiles().filter((n) => (OPERATIONS as Record<string, OperationSpec>)[n]?.installedBy !== 'adoption');

function previousMigration(): string {
  const names = fs
    .readdirSync(path.join(MIGRATIONS_DIR, 'oceanbase'))
    .filter((f) => f.endsWith('.up.sql'))
    .map((f) => f.slice(0, -7))
    .sort();
  const before = names.filter((n) => n < '0020_production_schema');
  return before[before.length - 1];
}

describe('procedure COMMENT and SQL SECURITY (MariaDB)', () => {
  test('a fresh migrate up: every procedure has its one-line comment and SQL SECURITY DEFINER', async () => {
    const fx = await createBackend('mysql');
    try {
      const installed = await routines(fx);
      assert.deepEqual(installed.map((r) => r.name).sort(), migrationProcedures());
      for (const r of installed) {
        assert.ok(r.comment.length > 0 && !r.comment.includes('\n'), `${r.name} has a one-line comment`);
        assert.equal(r.comment, expectedComment(r.name));
        assert.equal(r.security, 'DEFINER', r.name);
      }
      const status = await withDriver(fx.target, (m) => m.status());
      assert.equal(status.drift, false, 'ALTER PROCEDURE left the recorded bodies valid');
    } finally {
      await fx.cleanup();
    }
  });

  test('an existing database: 0020 gives the procedures installed before it their comments (body checksums unchanged)', async () => {
    const fx = await createBackend('mysql', { migrate: false });
    try {
      await withDriver(fx.target, (m) => m.up({ to: previousMigration() }));
      // The database as the previous release left it: no comment, the default security.
      for (const r of await routines(fx)) await fx.query(`ALTER PROCEDURE ${r.name} COMMENT ''`);
      assert.ok((await routines(fx)).every((r) => r.comment === ''));
      const sql = await withDriver(fx.target, (m) => m.pendingSql());
      assert.match(sql, /ALTER PROCEDURE pc_aps_renew_term COMMENT 'the live holder extends its lease\.' SQL SECURITY DEFINER;/);
      await withDriver(fx.target, (m) => m.up());
      const after = await routines(fx);
      assert.equal(after.length, migrationProcedures().length);
      for (const r of after) assert.deepEqual([r.name, r.comment, r.security], [r.name, expectedComment(r.name), 'DEFINER']);
      assert.equal((await withDriver(fx.target, (m) => m.status())).drift, false);
    } finally {
      await fx.cleanup();
    }
  });
});

async function withDriver<T>(target: Parameters<typeof openMigrationDriver>[0], fn: (m: Migrator) => Promise<T>): Promise<T> {
  const driver = await openMigrationDriver(target);
  try {
    return await fn(new Migrator(driver));
  } finally {
    await driver.close();
  }
}

test('ops/mysql-grants.sql: the owner migrates, the runtime account (EXECUTE + demo tables) runs families and tasks, and cannot write pc_* tables', async () => {
  const base = parseDatabaseUrl(MYSQL_TEST_URL, 'APSUP_TEST_MYSQL_URL');
  assert.ok(base.backend === 'mysql');
  const suffix = crypto.randomBytes(3).toString('hex');
  const db = `apsup_g_${process.pid}_${suffix}`;
  const owner = userFor('owner', suffix);
  const runtimeUser = userFor('runtime', suffix);
  const password = `pw-${suffix}`;
  const admin = await mysql.createConnection({ host: base.host, port: base.port, user: base.user, password: base.password, database: base.database });
  const { setup, afterMigrations, demo } = grantScript(db, suffix, password);
  const cleanups: Array<() => Promise<void>> = [];
  try {
    assert.ok(
      setup.some((s) => /^GRANT EXECUTE ON/.test(s)) && afterMigrations.length === 12 && demo.length === 30,
      'the script has its setup, after-migrations and demo parts',
    );
    for (const sql of setup) await admin.query(sql);
    const ownerTarget = { ...base, database: db, user: owner, password };
    await withDriver(ownerTarget, (m) => m.up({ demo: true }));
    for (const sql of afterMigrations) await admin.query(sql);
    for (const sql of demo) await admin.query(sql); // table grants need the tables (after --with-demo)
    const definers = await admin.query('SELECT DISTINCT DEFINER AS d, SECURITY_TYPE AS s FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?', [db]);
    assert.deepEqual(definers[0], [{ d: `${owner}@%`, s: 'DEFINER' }], 'the migrating owner is the definer of every procedure');

    const url = `mysql://${runtimeUser}:${password}@${base.host}:${base.port}/${db}`;
    const store = MysqlStore.open({ host: base.host, port: base.port, user: runtimeUser, password, database: db }, 8);
    const rootStore = MysqlStore.open({ host: base.host, port: base.port, user: base.user, password: base.password, database: db }, 4);
    cleanups.push(
      () => store.close(),
      () => rootStore.close(),
    );
    const fx: BackendFixture = {
      backend: 'mysql',
      target: { ...base, database: db, user: runtimeUser, password },
      url,
      store,
      openStore: () => MysqlStore.open({ host: base.host, port: base.port, user: runtimeUser, password, database: db }, 4),
      async query(sql, params = []) {
        const [rows] = await rootStore.pool.query(sql, params); // assertions read as root
        return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
      },
      async cleanup() {},
    };

    // No write path around the procedures: the runtime account cannot touch a pc_* table.
    for (const sql of [
      "UPDATE pc_artifact_processing_leases SET holder_id = 'x'",
      "INSERT INTO pc_durable_tasks (task_type) VALUES ('x')",
      'SELECT * FROM pc_artifact_processing_intents',
    ]) {
      await assert.rejects(store.pool.query(sql), (e: { errno?: number }) => e.errno === 1142, sql);
    }

    // The supervisor: term, scan, admission, dispatch, the worker's fenced commit and acknowledgement.
    await appendTopicSource(store, 'A', { words: 10 });
    await appendTopicSource(store, 'A', { words: 11 });
    const runtime = await startRuntime(fx, [topicMemory], { env: { POWERCONTEXT_SERVER_RUNTIME_TOPIC_MEMORY_SCHEDULE_SECONDS: '1' } });
    cleanups.unshift(() => runtime.stop());
    await waitFor(async () => Number((await fx.query("SELECT through_seq FROM ref_topic_cursors WHERE scope_id = 'A'"))[0]?.through_seq ?? 0) === 2, 30_000);
    const intent = await store.readIntent(topicMemory.bindingName, 'A');
    assert.equal(intent!.handledGeneration, intent!.requestedGeneration);
    await runtime.stop();
    cleanups.shift();

    // apsup run's schema check as this account: it cannot read the migration records, and says
    // so (a warning) instead of refusing the start as drift.
    const check = await requireMigratedSchema(fx.target, { command: 'run', allMigrations: true, drift: true });
    assert.equal(check.checked, false);
    assert.match(check.reason ?? '', /may not read the migration records/);

    // Durable tasks: submit, claim, attempt in a child process, fenced domain writes, completion.
    const kit = await makeRunner(fx, {}, REFERENCE_TASKS_MODULE);
    cleanups.unshift(() => kit.runner.stop());
    await kit.runner.start();
    const submitted = await kit.service.submit({ taskType: 'generate-dataset', payload: { datasetId: 'd-grants', items: 2 } });
    const done = await waitForTask(new TaskStore(store as BaseStore), submitted.taskId, isTerminal, 30_000);
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
  } finally {
    for (const c of cleanups) await c().catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${db}`).catch(() => undefined);
    for (const role of ROLES) await admin.query(`DROP USER IF EXISTS '${userFor(role, suffix)}'@'%'`).catch(() => undefined);
    await admin.end();
  }
});
