/**
 * Migrated test databases without migrating each one: the migrations run once into a template
 * (keyed by the SHA-256 of everything that decides the migrated schema), and each test database
 * is a copy of it. SQLite: the template file is copied. MySQL: a template schema
 * `apsup_tpl_<hash>` is built once per server under a named lock (shared by every test process),
 * and each clone replays its tables (SHOW CREATE TABLE), their rows and its procedures (SHOW CREATE
 * PROCEDURE, under the sql_mode and character set each was created with) in one round trip.
 * A clone has the ledger rows and procedure checksums of a migrated database, so `migrate status`
 * reports no drift on it. Clones are shared by the test processes of the server and kept between
 * runs (`apsup_tp_<template hash>_<random>`): one is in use while a session holds the named lock
 * of its name (the admin connection of the test that has it; a killed process releases it), and a
 * process that takes a free one resets it (objects a test added dropped, the template's rows back)
 * unless another session is still connected to it or the test changed the template's objects,
 * then it is dropped. Building a clone costs the server about ten times a reset.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl, type DatabaseTarget } from '../../src/config/database-url.ts';
import { createEphemeralDatabase, migrateTarget, type EphemeralDatabase } from '../../src/devtools/ephemeral-database.ts';
import { PACKAGE_ROOT } from '../../src/paths.ts';
import type { Backend } from '../../src/store/types.ts';

/** Inputs of a migrated schema: migration files, procedure files, the runner, the session setup. */
const INPUTS = [
  'migrations',
  'procedures',
  'src/migrations',
  'src/store/mysql/mysql-session.ts',
  'src/devtools/ephemeral-database.ts',
  'test/helpers/template-db.ts',
];

function listFiles(rel: string): string[] {
  const full = path.join(PACKAGE_ROOT, rel);
  if (!fs.existsSync(full)) return [];
  if (!fs.statSync(full).isDirectory()) return [rel];
  return fs
    .readdirSync(full)
    .sort()
    .flatMap((name) => listFiles(path.join(rel, name)));
}

let cachedHash: string | undefined;
/** SHA-256 (first 16 hex digits) over the paths and contents of INPUTS. */
export function templateHash(): string {
  if (cachedHash) return cachedHash;
  const hash = crypto.createHash('sha256');
  for (const rel of INPUTS.flatMap(listFiles))
    hash
      .update(`${rel}\0`)
      .update(fs.readFileSync(path.join(PACKAGE_ROOT, rel)))
      .update('\0');
  cachedHash = hash.digest('hex').slice(0, 16);
  return cachedHash;
}

// ---- SQLite -------------------------------------------------------------------------------

let sqliteTemplate: string | undefined;

async function sqliteTemplateFile(): Promise<string> {
  if (sqliteTemplate && fs.existsSync(sqliteTemplate)) return sqliteTemplate;
  const file = path.join(os.tmpdir(), `apsup-template-${templateHash()}.sqlite`);
  if (!fs.existsSync(file)) {
    const db = await createEphemeralDatabase('sqlite', { migrate: true, prefix: 'apsup-tplbuild' });
    if (db.target.backend !== 'sqlite') throw new Error('unreachable');
    const wal = `${db.target.file}-wal`;
    if (fs.existsSync(wal) && fs.statSync(wal).size > 0) throw new Error('the migrated SQLite template was left with a non-empty WAL');
    // Rename is atomic: concurrent test processes see either no template or a complete one.
    const partial = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
    fs.copyFileSync(db.target.file, partial);
    fs.renameSync(partial, file);
    await db.drop();
  }
  sqliteTemplate = file;
  return file;
}

async function cloneSqlite(prefix: string): Promise<EphemeralDatabase> {
  const template = await sqliteTemplateFile();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const file = path.join(dir, 'db.sqlite');
  fs.copyFileSync(template, file);
  return {
    backend: 'sqlite',
    target: { backend: 'sqlite', file },
    url: `sqlite:${file}`,
    async drop() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- MySQL --------------------------------------------------------------------------------

const READY_MARKER = 'zz_apsup_template_ready';

export interface MysqlTemplate {
  schema: string;
  /** One multi-statement text that builds a clone inside the current database. */
  script: string;
  /** Statements that bring a used clone back to the template's rows (see release). */
  resetStatements: (database: string) => string;
  /** The template's tables, procedures and triggers (anything else in a used clone is a test's). */
  objects: { tables: Set<string>; procedures: Set<string>; triggers: Set<string> };
  fingerprint: string;
}

const mysqlTemplates = new Map<string, Promise<MysqlTemplate>>();

function q(name: string): string {
  return `\`${name.replace(/`/g, '``')}\``;
}

async function adminConnection(adminUrl: string, multipleStatements = false) {
  const base = parseDatabaseUrl(adminUrl, 'APSUP_TEST_MYSQL_URL');
  if (base.backend !== 'mysql') throw new Error('the MySQL admin URL must be a mysql:// URL');
  try {
    const conn = await mysql.createConnection({
      host: base.host,
      port: base.port,
      user: base.user,
      password: base.password,
      database: base.database,
      multipleStatements,
      charset: 'utf8mb4',
    });
    return { conn, base };
  } catch (error) {
    throw new Error(`MySQL ${base.host}:${base.port} does not answer (${(error as Error).message}); start MariaDB (see .ci/run) or set APSUP_TEST_MYSQL_URL`);
  }
}

async function buildMysqlTemplate(adminUrl: string): Promise<MysqlTemplate> {
  const schema = `apsup_tpl_${templateHash()}`;
  const { conn, base } = await adminConnection(adminUrl);
  try {
    await sweepStaleClones(conn, templateHash());
    await sweepStaleTemplates(conn, templateHash());
    const [[locked]] = (await conn.query('SELECT GET_LOCK(?, 300) AS ok', [schema])) as unknown as [[{ ok: number }]];
    if (Number(locked.ok) !== 1) throw new Error(`could not take the template lock ${schema}`);
    try {
      const [ready] = (await conn.query('SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [
        schema,
        READY_MARKER,
      ])) as unknown as [unknown[]];
      if (ready.length === 0) {
        await conn.query(`DROP DATABASE IF EXISTS ${q(schema)}`);
        await conn.query(`CREATE DATABASE ${q(schema)} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
        await migrateTarget({ ...base, database: schema });
        await conn.query(`CREATE TABLE ${q(schema)}.${q(READY_MARKER)} (id INT PRIMARY KEY)`);
      }
      const read = await readSchema(conn, schema);
      return { schema, ...read, fingerprint: await fingerprint(conn, schema) };
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [schema]);
    }
  } finally {
    await conn.end();
  }
}

/** The statements that rebuild `schema`'s tables, rows and procedures in the current database. */
async function readSchema(conn: mysql.Connection, schema: string): Promise<Pick<MysqlTemplate, 'script' | 'resetStatements' | 'objects'>> {
  const parts: string[] = [];
  const [tables] = (await conn.query(
    "SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' AND TABLE_NAME <> ? ORDER BY TABLE_NAME",
    [schema, READY_MARKER],
  )) as unknown as [{ name: string }[]];
  const [views] = (await conn.query('SELECT COUNT(*) AS n FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ?', [schema])) as unknown as [[{ n: number }]];
  const [triggers] = (await conn.query('SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? ORDER BY TRIGGER_NAME', [
    schema,
  ])) as unknown as [{ name: string }[]];
  const [functions] = (await conn.query("SELECT COUNT(*) AS n FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? AND ROUTINE_TYPE <> 'PROCEDURE'", [
    schema,
  ])) as unknown as [[{ n: number }]];
  if (Number(views[0].n) + Number(functions[0].n) > 0) {
    throw new Error(`template ${schema} has views or functions, which the clone does not copy yet (test/helpers/template-db.ts)`);
  }
  const [autoIncrement] = (await conn.query(
    "SELECT DISTINCT TABLE_NAME AS name FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND EXTRA LIKE '%auto_increment%'",
    [schema],
  )) as unknown as [{ name: string }[]];
  const counters = new Set(autoIncrement.map((r) => r.name));
  const withRows: string[] = [];
  parts.push('SET FOREIGN_KEY_CHECKS = 0');
  for (const { name } of tables) {
    const [[row]] = (await conn.query(`SHOW CREATE TABLE ${q(schema)}.${q(name)}`)) as unknown as [[Record<string, string>]];
    parts.push(row['Create Table']);
    const [[count]] = (await conn.query(`SELECT COUNT(*) AS n FROM ${q(schema)}.${q(name)}`)) as unknown as [[{ n: number }]];
    if (Number(count.n) > 0) {
      withRows.push(name);
      parts.push(`INSERT INTO ${q(name)} SELECT * FROM ${q(schema)}.${q(name)}`);
    }
  }
  parts.push('SET FOREIGN_KEY_CHECKS = 1');
  const [procedures] = (await conn.query(
    "SELECT ROUTINE_NAME AS name FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? AND ROUTINE_TYPE = 'PROCEDURE' ORDER BY ROUTINE_NAME",
    [schema],
  )) as unknown as [{ name: string }[]];
  for (const { name } of procedures) {
    const [[row]] = (await conn.query(`SHOW CREATE PROCEDURE ${q(schema)}.${q(name)}`)) as unknown as [[Record<string, string>]];
    // A routine keeps the sql_mode and client character set of its CREATE.
    parts.push(`SET SESSION sql_mode = ${conn.escape(row.sql_mode)}`);
    parts.push(`SET character_set_client = ${conn.escape(row.character_set_client)}, collation_connection = ${conn.escape(row.collation_connection)}`);
    parts.push(row['Create Procedure']);
  }
  // Triggers last (the rows above are the template's, already counted): each under its own
  // sql_mode and character set, as a routine.
  for (const { name } of triggers) {
    const [[row]] = (await conn.query(`SHOW CREATE TRIGGER ${q(schema)}.${q(name)}`)) as unknown as [[Record<string, string>]];
    parts.push(`SET SESSION sql_mode = ${conn.escape(row.sql_mode)}`);
    parts.push(`SET character_set_client = ${conn.escape(row.character_set_client)}, collation_connection = ${conn.escape(row.collation_connection)}`);
    parts.push(row['SQL Original Statement']);
  }
  // Reset: counters restart (TRUNCATE, which fires no trigger), other tables are emptied, the
  // template's rows come back (the running count of pc_durable_task_control with them).
  const resetStatements = (database: string) =>
    [
      ...tables.map(({ name }) => (counters.has(name) ? `TRUNCATE TABLE ${q(database)}.${q(name)}` : `DELETE FROM ${q(database)}.${q(name)}`)),
      ...withRows.map((name) => `INSERT INTO ${q(database)}.${q(name)} SELECT * FROM ${q(schema)}.${q(name)}`),
    ].join(';\n');
  const objects = {
    tables: new Set(tables.map((t) => t.name)),
    procedures: new Set(procedures.map((p) => p.name)),
    triggers: new Set(triggers.map((t) => t.name)),
  };
  return { script: parts.join(';\n'), resetStatements, objects };
}

/** Tables, columns, indexes, procedure and trigger bodies of a schema, without its name. */
async function fingerprint(conn: mysql.Connection, schema: string): Promise<string> {
  await conn.query('SET SESSION group_concat_max_len = 4194304');
  const [[row]] = (await conn.query(
    `SELECT
       (SELECT SHA2(GROUP_CONCAT(CONCAT_WS(':', TABLE_NAME, ORDINAL_POSITION, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, IFNULL(COLUMN_DEFAULT, '~'), EXTRA)
                    ORDER BY TABLE_NAME, ORDINAL_POSITION SEPARATOR ','), 256)
          FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME <> ?) AS columns_sum,
       (SELECT SHA2(GROUP_CONCAT(CONCAT_WS(':', TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE)
                    ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX SEPARATOR ','), 256)
          FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME <> ?) AS indexes_sum,
       (SELECT SHA2(GROUP_CONCAT(CONCAT_WS(':', ROUTINE_NAME, SHA2(ROUTINE_DEFINITION, 256), SQL_MODE) ORDER BY ROUTINE_NAME SEPARATOR ','), 256)
          FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?) AS routines_sum,
       (SELECT SHA2(GROUP_CONCAT(CONCAT_WS(':', TRIGGER_NAME, EVENT_OBJECT_TABLE, ACTION_TIMING, EVENT_MANIPULATION, SHA2(ACTION_STATEMENT, 256))
                    ORDER BY TRIGGER_NAME SEPARATOR ','), 256)
          FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?) AS triggers_sum`,
    [schema, READY_MARKER, schema, READY_MARKER, schema, schema],
  )) as unknown as [[Record<string, string | null>]];
  return `${row.columns_sum}/${row.indexes_sum}/${row.routines_sum}/${row.triggers_sum}`;
}

const POOL_PREFIX = 'apsup_tp';
/** A shared clone's name: the template's hash (16 hex digits) and a random part. */
const SHARED = /^apsup_tp_([0-9a-f]{16})_[0-9a-f]{8}$/;
/** The per-process clones of earlier versions of this file, named after their process. */
const PER_PROCESS = /^apsup_tp_(\d{1,10})_[0-9a-f]{8}$/;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function lock(conn: mysql.Connection, name: string): Promise<boolean> {
  const [[row]] = (await conn.query('SELECT GET_LOCK(?, 0) AS ok', [name])) as unknown as [[{ ok: number | null }]];
  return Number(row.ok) === 1;
}

async function sessionsOn(conn: mysql.Connection, database: string): Promise<number> {
  const [[row]] = (await conn.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()', [
    database,
  ])) as unknown as [[{ n: number }]];
  return Number(row.n);
}

async function poolNames(conn: mysql.Connection): Promise<string[]> {
  const [rows] = (await conn.query(`SHOW DATABASES LIKE '${POOL_PREFIX}\\_%'`)) as unknown as [Record<string, string>[]];
  return rows.map((row) => String(Object.values(row)[0]));
}

/** A template of other sources (an older checkout's) is dropped once it is this old. */
export const STALE_TEMPLATE_MS = 60 * 60 * 1000;
const TEMPLATE = /^apsup_tpl_([0-9a-f]{16})$/;

/**
 * Drops the templates of other sources built more than STALE_TEMPLATE_MS ago that nobody uses:
 * no clone of theirs is left (sweepStaleClones dropped the unused ones first; a clone in use
 * still reads its template's rows at each reset) and nobody is building them (their lock is
 * free). The age bound spares another checkout that is starting its tests beside this one.
 */
export async function sweepStaleTemplates(conn: mysql.Connection, hash: string, options: { staleMs?: number; only?: string } = {}): Promise<string[]> {
  const staleMs = options.staleMs ?? STALE_TEMPLATE_MS;
  await conn.query("SET time_zone = '+00:00'"); // CREATE_TIME and NOW() in one zone, whatever the server's
  const [rows] = (await conn.query(
    `SELECT s.SCHEMA_NAME AS name, TIMESTAMPDIFF(SECOND, MAX(t.CREATE_TIME), NOW()) AS age_s
       FROM information_schema.SCHEMATA s LEFT JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = s.SCHEMA_NAME
      WHERE s.SCHEMA_NAME LIKE 'apsup\\_tpl\\_%' GROUP BY s.SCHEMA_NAME`,
  )) as unknown as [{ name: string; age_s: number | null }[]];
  const young = (age: number | null) => age !== null && Number(age) * 1000 < staleMs;
  const dropped: string[] = [];
  for (const { name, age_s } of rows) {
    const other = TEMPLATE.exec(name);
    if (!other || other[1] === hash || (options.only !== undefined && name !== options.only) || young(age_s)) continue;
    if (!(await lock(conn, name))) continue;
    try {
      const clones = (await poolNames(conn)).filter((n) => SHARED.exec(n)?.[1] === other[1]);
      if (clones.length > 0) continue;
      await conn.query(`DROP DATABASE IF EXISTS ${q(name)}`);
      dropped.push(name);
    } catch {
      // another session dropped it first
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [name]);
    }
  }
  return dropped;
}

/** Drops the clones of other templates that nobody uses, and per-process clones whose process is gone. */
async function sweepStaleClones(conn: mysql.Connection, hash: string): Promise<void> {
  for (const name of await poolNames(conn)) {
    const old = PER_PROCESS.exec(name);
    if (old) {
      if (!alive(Number(old[1]))) await conn.query(`DROP DATABASE IF EXISTS ${q(name)}`).catch(() => undefined);
      continue;
    }
    const shared = SHARED.exec(name);
    if (!shared || shared[1] === hash || !(await lock(conn, name))) continue;
    try {
      if ((await sessionsOn(conn, name)) === 0) await conn.query(`DROP DATABASE IF EXISTS ${q(name)}`).catch(() => undefined);
    } finally {
      await conn.query('SELECT RELEASE_LOCK(?)', [name]);
    }
  }
}

/**
 * Makes a locked, used clone the template again: the tables, procedures and triggers a test added
 * are dropped, the rows reset. False (drop it) when the test changed the template's own objects;
 * null (leave it) while another session is still connected to it (a test's child process).
 */
export async function resetClone(admin: mysql.Connection, template: MysqlTemplate, database: string): Promise<boolean | null> {
  if ((await sessionsOn(admin, database)) > 0) return null;
  const [tables] = (await admin.query('SELECT TABLE_NAME AS name, TABLE_TYPE AS type FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?', [
    database,
  ])) as unknown as [{ name: string; type: string }[]];
  const [routines] = (await admin.query('SELECT ROUTINE_NAME AS name, ROUTINE_TYPE AS type FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?', [
    database,
  ])) as unknown as [{ name: string; type: string }[]];
  const [triggers] = (await admin.query('SELECT TRIGGER_NAME AS name FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?', [database])) as unknown as [
    { name: string }[],
  ];
  const drops = [
    ...triggers.filter((t) => !template.objects.triggers.has(t.name)).map((t) => `DROP TRIGGER ${q(database)}.${q(t.name)}`),
    ...tables.filter((t) => !template.objects.tables.has(t.name)).map((t) => `DROP ${t.type === 'VIEW' ? 'VIEW' : 'TABLE'} ${q(database)}.${q(t.name)}`),
    ...routines
      .filter((r) => r.type !== 'PROCEDURE' || !template.objects.procedures.has(r.name))
      .map((r) => `DROP ${r.type === 'PROCEDURE' ? 'PROCEDURE' : 'FUNCTION'} ${q(database)}.${q(r.name)}`),
  ];
  if (drops.length > 0) await admin.query(drops.join(';\n'));
  if ((await fingerprint(admin, database)) !== template.fingerprint) return false;
  await admin.query(template.resetStatements(database));
  return true;
}

/** A free shared clone of the template, locked by `admin` and reset, or null. */
export async function claimClone(admin: mysql.Connection, template: MysqlTemplate, hash: string): Promise<string | null> {
  const names = (await poolNames(admin)).filter((n) => SHARED.exec(n)?.[1] === hash);
  // Start anywhere: concurrent claimers try different clones first.
  const from = crypto.randomInt(Math.max(1, names.length));
  for (const name of [...names.slice(from), ...names.slice(0, from)]) {
    if (!(await lock(admin, name))) continue;
    const reset = await resetClone(admin, template, name).catch(() => false);
    if (reset) return name;
    if (reset === false) await admin.query(`DROP DATABASE IF EXISTS ${q(name)}`).catch(() => undefined);
    await admin.query('SELECT RELEASE_LOCK(?)', [name]);
  }
  return null;
}

/** The server's template (built once per process, under its lock). */
export function mysqlTemplate(adminUrl: string): Promise<MysqlTemplate> {
  let pending = mysqlTemplates.get(adminUrl);
  if (!pending) {
    pending = buildMysqlTemplate(adminUrl);
    mysqlTemplates.set(adminUrl, pending);
    pending.catch(() => mysqlTemplates.delete(adminUrl));
  }
  return pending;
}

async function cloneMysql(adminUrl: string, prefix: string): Promise<EphemeralDatabase> {
  void prefix;
  const template = await mysqlTemplate(adminUrl);
  const hash = templateHash();
  const share = process.env.APSUP_TEST_REUSE !== '0';
  // This connection holds the clone's named lock until the test drops the database.
  const { conn: admin, base } = await adminConnection(adminUrl, true);
  let database: string | null = null;
  try {
    database = share ? await claimClone(admin, template, hash) : null;
    if (!database) {
      database = `${POOL_PREFIX}_${hash}_${crypto.randomBytes(4).toString('hex')}`;
      if (!(await lock(admin, database))) throw new Error(`could not lock the new clone ${database}`);
      await admin.query(`CREATE DATABASE ${database} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
      await admin.query(`USE ${database}`);
      await admin.query(template.script);
      // Back to the admin database and a plain session.
      await admin.query(`USE ${q(base.database)}`);
      await admin.query('SET SESSION sql_mode = DEFAULT, NAMES utf8mb4');
    }
  } catch (error) {
    if (database) await admin.query(`DROP DATABASE IF EXISTS ${q(database)}`).catch(() => undefined);
    await admin.end().catch(() => undefined);
    throw error;
  }
  const name = database;
  const target: DatabaseTarget = { ...base, database: name };
  const auth = base.password ? `${encodeURIComponent(base.user)}:${encodeURIComponent(base.password)}` : encodeURIComponent(base.user);
  return {
    backend: 'mysql',
    target,
    url: `mysql://${auth}@${base.host}:${base.port}/${name}`,
    async drop() {
      try {
        // Shared: left as it is for the next claimer, which resets it (the lock goes with this session).
        if (!share) await admin.query(`DROP DATABASE IF EXISTS ${q(name)}`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** A fresh, migrated database: a copy of the per-run template (see the header). */
export async function createMigratedDatabase(backend: Backend, options: { mysqlAdminUrl: string; prefix: string }): Promise<EphemeralDatabase> {
  return backend === 'sqlite' ? cloneSqlite(options.prefix) : cloneMysql(options.mysqlAdminUrl, options.prefix);
}
