/**
 * The SQLite attacks of issue 40 (section 5 and item 3) as an adversarial processor author would
 * send them through ctx.commit and ctx.read, with the text checks turned off
 * (APSUP_UNSAFE_DISABLE_TEXT_CHECKS=1): the engine guard alone must refuse them. Used by
 * test/adversarial/sqlite-engine.test.ts; `$DIR` stands for a directory that must stay empty.
 */
import fs from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import type { BackendFixture } from '../helpers/backends.ts';

/** One attack: statements sent in order on one handle (a later one may rely on an earlier one). */
export interface Attack {
  name: string;
  steps: string[];
}

const lease = 'pc_artifact_processing_leases';

/** Through ctx.commit: inside the fenced transaction of a live term. */
export const COMMIT_ATTACKS: Attack[] = [
  { name: 'eternal lease', steps: [`UPDATE ${lease} SET expires_at = '2099-01-01 00:00:00.000'`] },
  { name: 'quoted name', steps: [`UPDATE "${lease}" SET holder_id = 'thief'`] },
  { name: 'main-qualified, mixed case', steps: [`UPDATE "main".PC_Artifact_Processing_Leases SET supervisor_generation = supervisor_generation + 1`] },
  { name: 'backtick and bracket quoting', steps: [`UPDATE \`${lease}\` SET holder_id = 'b'`, `UPDATE [${lease}] SET holder_id = 'c'`] },
  { name: 'comments before the write', steps: [`/* note */ UPDATE ${lease} SET holder_id = 'd'`, '-- note\nDELETE FROM pc_durable_tasks'] },
  { name: 'delete every intent (truncate)', steps: ['DELETE FROM pc_artifact_processing_intents'] },
  { name: 'delete intents with a WHERE', steps: ['DELETE FROM pc_artifact_processing_intents WHERE 1 = 1'] },
  { name: 'UPDATE inside a CTE', steps: ["WITH x AS (SELECT 1 AS one) UPDATE pc_durable_tasks SET state = 'cancelled' WHERE 1 IN (SELECT one FROM x)"] },
  { name: 'INSERT ... SELECT', steps: ["INSERT INTO pc_durable_task_control (name) SELECT 'x' || name FROM pc_durable_task_control"] },
  { name: 'REPLACE', steps: ["REPLACE INTO pc_durable_task_control (name, capacity) VALUES ('claims', 999)"] },
  { name: 'UPSERT', steps: ["INSERT INTO pc_durable_task_control (name) VALUES ('claims') ON CONFLICT (name) DO UPDATE SET capacity = 999"] },
  { name: 'batch items', steps: ["INSERT INTO pc_task_submit_batch_items (ord, task_type) VALUES (1, 'x')"] },
  { name: 'delete every task', steps: ['DELETE FROM pc_durable_tasks'] },
  { name: 'a signal row', steps: ["INSERT INTO pc_aps_signals (code) VALUES ('adv')"] },
  {
    name: 'the task id sequence',
    steps: ["UPDATE sqlite_sequence SET seq = 9223372036854775807 WHERE name = 'pc_durable_tasks'", 'DELETE FROM sqlite_sequence'],
  },
  { name: 'a trigger of a business migration writes an own table', steps: ["INSERT INTO adv_hooked (v) VALUES ('x')"] },
  { name: 'two statements in one', steps: ["UPDATE adv_items SET n = 1; UPDATE pc_artifact_processing_leases SET holder_id = 'two'"] },
  {
    name: 'CREATE TRIGGER, then a business insert fires it',
    steps: [
      `CREATE TRIGGER adv_t AFTER INSERT ON adv_items BEGIN UPDATE ${lease} SET holder_id = 'trigger'; END`,
      "INSERT INTO adv_items (name, n) VALUES ('t', 1)",
    ],
  },
  {
    name: 'CREATE TEMP TRIGGER on a main table, then an insert fires it',
    steps: [
      'CREATE TEMP TRIGGER adv_tt AFTER INSERT ON main.adv_items BEGIN DELETE FROM pc_durable_tasks; END',
      "INSERT INTO adv_items (name, n) VALUES ('tt', 1)",
    ],
  },
  { name: 'DROP TABLE (own)', steps: ['DROP TABLE pc_aps_signals'] },
  { name: 'DROP TABLE (business)', steps: ['DROP TABLE adv_items'] },
  { name: 'DROP VIEW / TRIGGER', steps: ['DROP VIEW pc_artifact_processing_live_terms', 'DROP TRIGGER pc_aps_signal_term_lost'] },
  { name: 'ALTER TABLE', steps: ['ALTER TABLE pc_durable_tasks RENAME TO adv_tasks', 'ALTER TABLE adv_items ADD COLUMN extra TEXT'] },
  {
    name: 'CREATE TABLE / INDEX / VIRTUAL TABLE',
    steps: ['CREATE TABLE adv_new (a)', 'CREATE INDEX adv_i ON adv_items (n)', 'CREATE VIRTUAL TABLE adv_fts USING fts5 (a)'],
  },
  {
    name: 'PRAGMA writable_schema, then a schema write',
    steps: ['PRAGMA writable_schema = ON', "UPDATE sqlite_schema SET sql = sql WHERE name = 'adv_items'"],
  },
  {
    name: 'PRAGMAs that change the connection',
    steps: [
      'PRAGMA ignore_check_constraints = 1',
      'PRAGMA locking_mode = EXCLUSIVE',
      'PRAGMA synchronous = OFF',
      'PRAGMA recursive_triggers = 0',
      'PRAGMA busy_timeout = 1',
      'PRAGMA cache_size = 1',
      'PRAGMA query_only = 1',
      'PRAGMA defer_foreign_keys = 1',
    ],
  },
  {
    name: 'PRAGMAs that write the file',
    steps: ['PRAGMA user_version = 99', 'PRAGMA journal_mode = DELETE', 'PRAGMA wal_checkpoint(TRUNCATE)', 'PRAGMA incremental_vacuum'],
  },
  { name: 'EXPLAIN PRAGMA (applied when compiled)', steps: ['EXPLAIN PRAGMA ignore_check_constraints = 1', 'EXPLAIN PRAGMA locking_mode = EXCLUSIVE'] },
  { name: 'ANALYZE through pragma_optimize', steps: ['SELECT * FROM pragma_optimize(-1)', 'ANALYZE'] },
  { name: 'ATTACH a new file and write it', steps: ["ATTACH '$DIR/attached.db' AS adv", 'CREATE TABLE adv.t (a)', 'INSERT INTO adv.t VALUES (1)'] },
  { name: 'VACUUM / VACUUM INTO', steps: ['VACUUM', "VACUUM INTO '$DIR/copy.db'"] },
  {
    name: 'COMMIT, then unfenced writes',
    steps: ['COMMIT', `UPDATE ${lease} SET holder_id = 'after-commit'`, "VACUUM INTO '$DIR/after-commit.db'", "ATTACH '$DIR/after.db' AS a2"],
  },
  { name: 'END / ROLLBACK / BEGIN', steps: ['END', 'ROLLBACK', 'BEGIN', 'BEGIN IMMEDIATE'] },
  { name: 'SAVEPOINT / RELEASE / ROLLBACK TO', steps: ['SAVEPOINT adv', 'ROLLBACK TO adv', 'RELEASE adv'] },
  { name: 'load_extension', steps: ["SELECT load_extension('$DIR/x.so')"] },
];

/** Business writes a processor legitimately commits: every one must still work. */
export const BUSINESS_WRITES: Array<{ name: string; sql: string; params?: unknown[]; rows?: number; ownTableName?: true }> = [
  { name: 'INSERT', sql: 'INSERT INTO adv_items (name, n) VALUES (?, ?)', params: ['b1', 1] },
  { name: 'UPDATE', sql: 'UPDATE adv_items SET n = n + 1 WHERE name = ?', params: ['b1'] },
  { name: 'named parameters', sql: 'UPDATE adv_items SET n = :n WHERE name = :name', params: [{ n: 5, name: 'b1' }] },
  { name: 'UPSERT', sql: "INSERT INTO adv_items (name, n) VALUES ('b2', 1) ON CONFLICT (name) DO UPDATE SET n = n + 1" },
  { name: 'REPLACE', sql: "REPLACE INTO adv_items (name, n) VALUES ('b2', 7)" },
  { name: 'RETURNING', sql: "INSERT INTO adv_items (name, n) VALUES ('b3', 3) RETURNING id, n", rows: 1 },
  { name: 'DELETE', sql: 'DELETE FROM adv_items WHERE name = ?', params: ['b3'] },
  { name: 'DELETE every row (truncate)', sql: 'DELETE FROM adv_scratch' },
  { name: 'AUTOINCREMENT (writes sqlite_sequence)', sql: "INSERT INTO adv_log (note) VALUES ('a')" },
  // Reads an own table: the engine allows it; a text check may refuse a write naming one (ownTableName).
  { name: 'INSERT ... SELECT from an own table', sql: 'INSERT INTO adv_log (note) SELECT scope_id FROM pc_artifact_processing_intents', ownTableName: true },
  { name: 'WITH ... INSERT', sql: "WITH s AS (SELECT 'w' AS note) INSERT INTO adv_log (note) SELECT note FROM s" },
  { name: 'json_each', sql: 'INSERT INTO adv_items (name, n) SELECT value, 0 FROM json_each(?)', params: ['["j1","j2"]'] },
  { name: 'a business trigger', sql: "INSERT INTO adv_audited (v) VALUES ('x')" },
  { name: 'a foreign-key cascade', sql: 'DELETE FROM adv_parent WHERE id = 1' },
  { name: 'a read of an own table', sql: 'SELECT count(*) AS n FROM pc_durable_tasks', rows: 1 },
];

/** Through ctx.read (a read-only connection). */
export const READ_ATTACKS: Attack[] = [
  { name: 'INSERT', steps: ["INSERT INTO adv_items (name, n) VALUES ('read', 1)"] },
  { name: 'own table', steps: [`UPDATE ${lease} SET holder_id = 'reader'`] },
  { name: 'WITH ... INSERT', steps: ["WITH x AS (SELECT 1) INSERT INTO adv_items (name, n) SELECT 'cte', 1 FROM x"] },
  { name: 'PRAGMA query_only = 0, then a write', steps: ['PRAGMA query_only = 0', "INSERT INTO adv_items (name, n) VALUES ('qo', 1)"] },
  { name: 'VACUUM INTO', steps: ["VACUUM INTO '$DIR/read-copy.db'"] },
  { name: 'PRAGMA query_only = 0, then VACUUM INTO', steps: ['PRAGMA query_only = 0', "VACUUM INTO '$DIR/read-copy-2.db'"] },
  { name: 'ATTACH a new file, then write it', steps: ["ATTACH '$DIR/read-attached.db' AS a", 'CREATE TABLE a.t (x)', 'INSERT INTO a.t VALUES (1)'] },
  { name: 'ATTACH a URI that asks for rwc', steps: ["ATTACH 'file:$DIR/read-uri.db?mode=rwc' AS u", 'CREATE TABLE u.t (x)'] },
  { name: 'PRAGMA writable_schema, then a schema write', steps: ['PRAGMA writable_schema = 1', "UPDATE sqlite_schema SET sql = sql WHERE name = 'adv_items'"] },
  { name: 'load_extension', steps: ["SELECT load_extension('$DIR/x.so')"] },
  { name: 'BEGIN IMMEDIATE', steps: ['BEGIN IMMEDIATE'] },
  { name: 'ANALYZE through pragma_optimize', steps: ['SELECT * FROM pragma_optimize(-1)'] },
  { name: 'PRAGMA journal_mode', steps: ['PRAGMA journal_mode = DELETE'] },
];

/** Reads that must still work on the read handle. */
export const LEGITIMATE_READS = [
  'SELECT name, n FROM adv_items ORDER BY name',
  'WITH x AS (SELECT n FROM adv_items) SELECT count(*) AS c FROM x',
  'VALUES (1)',
  'SELECT count(*) AS c FROM pc_durable_tasks',
  "SELECT value FROM json_each('[1,2]')",
  'EXPLAIN QUERY PLAN SELECT * FROM adv_items WHERE name = 1',
];

/** The business tables the attacks and writes use, created as a business migration would. */
export async function createBusinessTables(fx: BackendFixture): Promise<void> {
  for (const sql of [
    'CREATE TABLE adv_items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, n INTEGER NOT NULL)',
    'CREATE TABLE adv_scratch (v TEXT)',
    'CREATE TABLE adv_log (id INTEGER PRIMARY KEY AUTOINCREMENT, note TEXT)',
    'CREATE TABLE adv_audited (v TEXT)',
    'CREATE TABLE adv_audit (v TEXT)',
    'CREATE TRIGGER adv_audited_ins AFTER INSERT ON adv_audited BEGIN INSERT INTO adv_audit (v) VALUES (NEW.v); END',
    // A business migration is the processor author's: its trigger is an attack too.
    'CREATE TABLE adv_hooked (v TEXT)',
    "CREATE TRIGGER adv_hooked_ins AFTER INSERT ON adv_hooked BEGIN UPDATE pc_artifact_processing_leases SET holder_id = 'hook'; END",
    'CREATE TABLE adv_parent (id INTEGER PRIMARY KEY)',
    'CREATE TABLE adv_child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES adv_parent (id) ON DELETE CASCADE)',
    "INSERT INTO adv_items (name, n) VALUES ('seed', 0)",
    "INSERT INTO adv_scratch (v) VALUES ('s')",
    'INSERT INTO adv_parent (id) VALUES (1)',
    'INSERT INTO adv_child (id, parent_id) VALUES (1, 1)',
  ])
    await fx.query(sql);
}

/** Replaces `$DIR` by the directory that must stay empty. */
export function inDir(sql: string, dir: string): string {
  return sql.replaceAll('$DIR', dir);
}

/**
 * Every row of every pc_* table, the SQLite sequences, the schema and the header cookies: what
 * no attack may change.
 */
export function ownState(db: BetterSqlite3.Database): string {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'pc\\_%' ESCAPE '\\' ORDER BY name").pluck().all() as string[];
  const state: Record<string, unknown> = {};
  for (const t of tables) state[t] = db.prepare(`SELECT * FROM "${t}" ORDER BY rowid`).all();
  state.sqlite_sequence = db.prepare('SELECT * FROM sqlite_sequence ORDER BY name').all();
  state.schema = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name').all();
  state.user_version = db.pragma('user_version', { simple: true });
  state.journal_mode = db.pragma('journal_mode', { simple: true });
  return JSON.stringify(state);
}

/** The business rows (for the read handle: nothing may change). */
export function businessState(db: BetterSqlite3.Database): string {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'adv\\_%' ESCAPE '\\' ORDER BY name").pluck().all() as string[];
  return JSON.stringify(tables.map((t) => db.prepare(`SELECT * FROM "${t}" ORDER BY rowid`).all()));
}

/** The settings of a connection that a statement must not change (the store's own connection). */
export const CONNECTION_SETTINGS = [
  'busy_timeout',
  'locking_mode',
  'synchronous',
  'foreign_keys',
  'recursive_triggers',
  'ignore_check_constraints',
  'writable_schema',
  'query_only',
  'defer_foreign_keys',
  'cache_size',
  'journal_mode',
];

export function connectionSettings(db: BetterSqlite3.Database): Record<string, unknown> {
  return Object.fromEntries(CONNECTION_SETTINGS.map((p) => [p, db.pragma(p, { simple: true })]));
}

export function filesIn(dir: string): string[] {
  return fs.readdirSync(dir);
}
