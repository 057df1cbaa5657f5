// Issue 40 "done when": the documented accounts of ops/mysql-grants.sql, run as a DBA would
// (the file as it is, names substituted), carry `apsup migrate up`, `db accounts`, `trigger`,
// `run`, `status`, `tasks submit` and `tasks worker` end to end through the CLI, and the runtime
// reports the fencing as enforced by grants. Without the processor and reader accounts it
// reports "filtered only" and `db accounts --check` exits 3.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl, type DatabaseTarget } from '../../src/config/database-url.ts';
import { runCli, spawnCli, MYSQL_ADMIN_URL, tempDir } from '../cli/helpers.ts';
import { ALPHA_BINDING, FAMILIES_MODULE_PATH } from '../fixtures/failover/families.ts';
import { EFFECTS_DDL, FIXTURE_DIR_VARIABLE } from '../fixtures/failover/protocol.ts';
import { waitFor } from '../helpers/backends.ts';
import { grantScript, ROLES, userFor, type Role } from '../helpers/grants-script.ts';

type Mysql = DatabaseTarget & { backend: 'mysql' };
// A deployment's own families module: the recorder processor writing its table fo_effects.
const FAMILIES = FAMILIES_MODULE_PATH;

describe('[mysql] the documented accounts through the CLI', () => {
  const base = parseDatabaseUrl(MYSQL_ADMIN_URL, 'APSUP_TEST_MYSQL_URL') as Mysql;
  const suffix = crypto.randomBytes(3).toString('hex');
  const db = `apsup_doc_${suffix}`;
  const password = `pw-${suffix}`;
  const url = (role: Role) => `mysql://${userFor(role, suffix)}:${password}@${base.host}:${base.port}/${db}`;
  const runtimeVars = () => ({ DATABASE_URL: url('runtime'), PROCESSOR_DATABASE_URL: url('processor'), READER_DATABASE_URL: url('reader') });
  let root: mysql.Connection;
  before(async () => {
    root = await mysql.createConnection({ host: base.host, port: base.port, user: base.user, password: base.password, database: base.database });
    const { setup, afterMigrations, demo } = grantScript(db, suffix, password);
    for (const sql of setup) await root.query(sql);
    const up = await runCli(['migrate', 'up', '--with-demo'], { DATABASE_URL: url('owner') });
    assert.equal(up.code, 0, up.stderr);
    // The owner may not create accounts: the migration says what is missing.
    assert.match(up.stdout, /accounts: filtered only/);
    for (const sql of [...afterMigrations, ...demo]) await root.query(sql);
    // The DBA's per-table business grants, as the file's example lines say.
    await root.query(`USE \`${db}\``);
    await root.query(EFFECTS_DDL);
    await root.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON \`${db}\`.fo_effects TO '${userFor('processor', suffix)}'@'%'`);
    await root.query(`GRANT SELECT ON \`${db}\`.fo_effects TO '${userFor('reader', suffix)}'@'%'`);
  });
  after(async () => {
    await root.query(`DROP DATABASE IF EXISTS \`${db}\``);
    for (const role of ROLES) await root.query(`DROP USER IF EXISTS '${userFor(role, suffix)}'@'%'`);
    await root.end();
  });

  test('db accounts --check: enforced by grants with the processor and reader URLs; exit 3 without them', async () => {
    const ok = await runCli(['db', 'accounts', '--check', '--json'], runtimeVars());
    assert.equal(ok.code, 0, ok.stderr);
    const report = JSON.parse(ok.stdout) as { setup: string; source: string; summary: string; processor: string };
    assert.deepEqual([report.setup, report.source, report.processor], ['grants', 'configured', userFor('processor', suffix)]);
    assert.doesNotMatch(ok.stdout, new RegExp(password), 'no password in the report');
    const alone = await runCli(['db', 'accounts', '--check'], { DATABASE_URL: url('runtime') });
    assert.equal(alone.code, 3, alone.stdout + alone.stderr);
    assert.match(alone.stdout, /^filtered only: /);
  });

  test('trigger, run, status, tasks submit and tasks worker as the runtime account', async () => {
    const fixtureDir = tempDir();
    const trigger = await runCli(['trigger', 'fo-alpha', 'doc-scope', '--families', FAMILIES], runtimeVars());
    assert.equal(trigger.code, 0, trigger.stderr);
    const run = spawnCli(['run', '--families', FAMILIES, '--role', 'background'], runtimeVars(), {
      APSUP_LOG_FORMAT: 'json',
      [FIXTURE_DIR_VARIABLE]: fixtureDir,
    });
    try {
      await waitFor(() => /fencing: enforced by grants/.test(run.out.stdout), 30_000, 100);
      // The trigger's request acknowledged by a worker process on the processor account.
      await waitFor(
        async () => {
          const [rows] = await root.query(
            `SELECT handled_generation AS h, requested_generation AS r FROM \`${db}\`.pc_artifact_processing_intents WHERE binding_name = ? AND scope_id = 'doc-scope'`,
            [ALPHA_BINDING],
          );
          const r = (rows as Array<{ h: number; r: number }>)[0];
          return r !== undefined && Number(r.h) >= Number(r.r);
        },
        30_000,
        200,
      );
      const status = await runCli(['status', '--families', FAMILIES, '--json'], runtimeVars());
      assert.equal(status.code, 0, status.stderr);
      const report = JSON.parse(status.stdout) as { supervisors: Array<{ supervisorKey: string; live: boolean }>; fencing: { setup: string } };
      assert.equal(report.fencing.setup, 'grants', 'apsup status reports the setup in force');
      assert.ok(
        report.supervisors.some((s) => s.supervisorKey === 'global' && s.live),
        status.stdout,
      );
    } finally {
      run.child.kill('SIGTERM');
      await run.result;
    }
    assert.doesNotMatch(run.out.stdout + run.out.stderr, /permission|denied/i, 'no privilege error on the way');
    const [effects] = await root.query(`SELECT worker_pid FROM \`${db}\`.fo_effects WHERE scope_id = 'doc-scope'`);
    assert.equal((effects as unknown[]).length, 1, 'the business row of the fenced commit');

    const submit = await runCli(['tasks', 'submit', 'generate-dataset', '--payload', '{"datasetId":"doc-d1","items":2}', '--json'], runtimeVars());
    assert.equal(submit.code, 0, submit.stderr);
    const { taskId } = JSON.parse(submit.stdout) as { taskId: number };
    const worker = spawnCli(['tasks', 'worker'], runtimeVars(), { APSUP_LOG_FORMAT: 'json' });
    try {
      await waitFor(
        async () => {
          const show = await runCli(['tasks', 'show', String(taskId), '--json'], runtimeVars());
          return (JSON.parse(show.stdout) as { state: string }).state === 'succeeded';
        },
        30_000,
        300,
      );
      assert.match(worker.out.stdout, /fencing: enforced by grants/);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.result;
    }
  });
});
