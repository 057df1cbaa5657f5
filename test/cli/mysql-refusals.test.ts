// The migrate and run refusals on MySQL through bin/apsup.mjs: a dropped procedure stops `run`
// (exit 3, drift); `migrate sql` refuses wherever `up` would (a latin1 database: exit 3, no
// plan printed); `migrate down` at 0012 (no down file) refuses cleanly with exit 2.
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import { after, before, describe, test } from 'node:test';
import { parseDatabaseUrl } from '../../src/config/database-url.ts';
import { openMigrationDriver } from '../../src/migrations/drivers.ts';
import { Migrator } from '../../src/migrations/migrator.ts';
import { MYSQL_ADMIN_URL, TOPIC_FAMILIES, runCli } from './helpers.ts';

const parsed = parseDatabaseUrl(MYSQL_ADMIN_URL, 'APSUP_TEST_MYSQL_URL');
if (parsed.backend !== 'mysql') throw new Error('APSUP_TEST_MYSQL_URL must be mysql://');
const admin = parsed;
const created: string[] = [];
let conn: mysql.Connection;

async function schema(charset = 'utf8mb4'): Promise<{ url: string; name: string }> {
  const name = `apsup_cli_${process.pid}_${created.length}_${Date.now() % 100000}`;
  await conn.query(`CREATE DATABASE ${name} CHARACTER SET ${charset}`);
  created.push(name);
  const auth = admin.password ? `${encodeURIComponent(admin.user)}:${encodeURIComponent(admin.password)}` : encodeURIComponent(admin.user);
  return { url: `mysql://${auth}@${admin.host}:${admin.port}/${name}`, name };
}

async function migrate(url: string, to?: string): Promise<string[]> {
  const driver = await openMigrationDriver(parseDatabaseUrl(url));
  try {
    const m = new Migrator(driver);
    return await m.up(to === undefined ? {} : { to: m.files.find((f) => f.name.startsWith(to))!.name });
  } finally {
    await driver.close();
  }
}

describe('[mysql] CLI refusals', () => {
  before(async () => {
    conn = await mysql.createConnection({ host: admin.host, port: admin.port, user: admin.user, password: admin.password, database: admin.database });
  });
  after(async () => {
    for (const name of created) await conn.query(`DROP DATABASE IF EXISTS ${name}`);
    await conn?.end();
  });

  test('run refuses to start when a procedure was dropped (drift, exit 3)', async () => {
    const { url, name } = await schema();
    await migrate(url);
    await conn.query(`DROP PROCEDURE ${name}.pc_aps_read_lease`);
    const r = await runCli(['run', '--families', TOPIC_FAMILIES], { DATABASE_URL: url });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /^apsup: run refused: the schema has drifted \(.*pc_aps_read_lease/);
    assert.doesNotMatch(r.stdout, /supervisor start/);
    const [rows] = await conn.query(`SELECT COUNT(*) AS n FROM ${name}.pc_artifact_processing_leases WHERE holder_id IS NOT NULL`);
    assert.equal(Number((rows as Array<{ n: number }>)[0]!.n), 0, 'no term was taken');
  });

  test('migrate sql refuses on a latin1 database where up refuses (exit 3, no plan)', async () => {
    const { url } = await schema('latin1');
    const up = await runCli(['migrate', 'up'], { DATABASE_URL: url });
    assert.equal(up.code, 3, up.stderr);
    const sql = await runCli(['migrate', 'sql'], { DATABASE_URL: url });
    assert.equal(sql.code, 3, sql.stderr);
    assert.match(sql.stderr, /^apsup: .*character set/);
    assert.doesNotMatch(sql.stdout, /CREATE TABLE/);
  });

  test('migrate down at 0012 refuses cleanly (no down file): exit 2, schema unchanged', async () => {
    const { url } = await schema();
    const applied = await migrate(url, '0012');
    const r = await runCli(['migrate', 'down'], { DATABASE_URL: url });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^apsup: migrate down refused: migration ${applied.at(-1)} has no down file`));
    const status = await runCli(['migrate', 'status', '--json'], { DATABASE_URL: url });
    assert.equal(JSON.parse(status.stdout).migrations.filter((m: { state: string }) => m.state === 'applied').length, applied.length);
  });
});
