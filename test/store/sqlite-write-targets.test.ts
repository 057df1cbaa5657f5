// src/store/sqlite/write-targets.ts and program-facts.ts: what a statement writes, from the
// program SQLite compiles for it (issue 40 item 3). The attacks themselves are in
// test/adversarial/sqlite-engine.test.ts; here: the mapping of root pages to tables, the cache
// and its invalidation, the probe, and the handles the guard is given.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { isOwnTable } from '../../src/store/own-tables.ts';
import { readProgram, type ProgramOp } from '../../src/store/sqlite/program-facts.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { assertSqliteWriteTargets, sqliteWriteTargets } from '../../src/store/sqlite/write-targets.ts';
import { guardHandle } from '../../src/tasks/bounded-transaction.ts';
import { createBackend, type BackendFixture } from '../helpers/backends.ts';

const SCHEMA = [
  'CREATE TABLE biz (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER)',
  'CREATE INDEX biz_n ON biz (n)',
  'CREATE TABLE biz_log (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)',
  'CREATE TABLE biz_parent (id INTEGER PRIMARY KEY)',
  'CREATE TABLE biz_child (id INTEGER PRIMARY KEY, p INTEGER REFERENCES biz_parent (id) ON DELETE CASCADE)',
  'CREATE TABLE biz_audit (v TEXT)',
  'CREATE TRIGGER biz_audit_ins AFTER INSERT ON biz BEGIN INSERT INTO biz_audit (v) VALUES (NEW.name); END',
];

/** Runs fn inside BEGIN IMMEDIATE on db, rolled back after (the guard's setting: an open transaction). */
function inTransaction<T>(db: BetterSqlite3.Database, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    return fn();
  } finally {
    db.exec('ROLLBACK');
  }
}

describe('sqlite write targets', () => {
  let fx: BackendFixture;
  let db: BetterSqlite3.Database;
  before(async () => {
    fx = await createBackend('sqlite');
    for (const sql of SCHEMA) await fx.query(sql);
    db = (fx.store as SqliteStore).db;
  });
  after(async () => {
    await fx.cleanup();
  });

  test('every b-tree a program opens for writing maps to its table: indexes, triggers, cascades, AUTOINCREMENT', () => {
    const targets = (sql: string, params: unknown[] = []) => sqliteWriteTargets(db, sql, params).sort();
    assert.deepEqual(targets('UPDATE biz SET n = ? WHERE id = 1', [2]), ['main.biz']);
    assert.deepEqual(targets("INSERT INTO biz (name, n) VALUES ('a', 1)"), ['main.biz', 'main.biz_audit']);
    assert.deepEqual(targets('DELETE FROM biz_audit'), ['main.biz_audit'], 'DELETE without WHERE clears the b-tree (Clear)');
    assert.deepEqual(targets('DELETE FROM biz_parent WHERE id = 1'), ['main.biz_child', 'main.biz_parent']);
    assert.deepEqual(targets("INSERT INTO biz_log (v) VALUES ('x')"), ['main.biz_log', 'main.sqlite_sequence']);
    assert.deepEqual(targets('SELECT * FROM pc_durable_tasks'), []);
    assert.deepEqual(targets('DELETE FROM pc_durable_tasks WHERE task_id = ?', [1]), ['main.pc_durable_tasks']);
  });

  test('a write of an own table, the schema or an internal table is refused; the statement never reaches the connection', () => {
    inTransaction(db, () => {
      assertSqliteWriteTargets(db, "INSERT INTO biz (name, n) VALUES ('b', 1)");
      assertSqliteWriteTargets(db, "INSERT INTO biz_log (v) VALUES ('y')");
      assert.throws(() => assertSqliteWriteTargets(db, 'UPDATE pc_durable_task_control SET capacity = 1'), {
        name: 'ReadOnlyError',
        message: /pc_durable_task_control/,
      });
      assert.throws(() => assertSqliteWriteTargets(db, "DELETE FROM sqlite_sequence WHERE name = 'biz_log'"), { message: /internal table of SQLite/ });
      assert.throws(() => assertSqliteWriteTargets(db, 'CREATE TABLE biz_new (a)'), { message: /schema|header/ });
      const before_ = db.pragma('busy_timeout', { simple: true });
      assert.throws(() => assertSqliteWriteTargets(db, 'PRAGMA busy_timeout = 1'), { message: /\[Expire\]/ });
      assert.equal(db.pragma('busy_timeout', { simple: true }), before_, 'compiled on the probe, not on the connection');
    });
  });

  test('a compile error is the engine’s own; a parameter mismatch is the driver’s; an EXPLAIN is refused', () => {
    inTransaction(db, () => {
      assert.throws(() => assertSqliteWriteTargets(db, 'UPDATE biz_nowhere SET n = 1'), { name: 'SqliteError', message: /no such table: biz_nowhere/ });
      assert.throws(() => assertSqliteWriteTargets(db, 'UPDATE biz SET n = ?', []), RangeError);
      assert.throws(() => assertSqliteWriteTargets(db, 'EXPLAIN UPDATE pc_durable_tasks SET state = 1'), {
        name: 'ReadOnlyError',
        message: /cannot list the program/,
      });
      assert.throws(() => assertSqliteWriteTargets(db, 'EXPLAIN QUERY PLAN SELECT 1'), { name: 'ReadOnlyError' });
    });
  });

  test('a cached verdict is dropped when the schema changes (a trigger added by another connection)', async () => {
    const sql = "INSERT INTO biz (name, n) VALUES ('c', 1)";
    inTransaction(db, () => assertSqliteWriteTargets(db, sql));
    const other = fx.openStore() as SqliteStore;
    other.db.exec("CREATE TRIGGER biz_sneaky AFTER INSERT ON biz BEGIN UPDATE pc_artifact_processing_leases SET holder_id = 'x'; END");
    try {
      inTransaction(db, () => assert.throws(() => assertSqliteWriteTargets(db, sql), { message: /pc_artifact_processing_leases/ }));
    } finally {
      other.db.exec('DROP TRIGGER biz_sneaky');
    }
    inTransaction(db, () => assertSqliteWriteTargets(db, sql));
  });

  test("a bounded transaction's closable proxy of the connection is guarded like the connection", () => {
    inTransaction(db, () => {
      const guarded = guardHandle(db);
      try {
        const proxy = guarded.handle as BetterSqlite3.Database;
        assertSqliteWriteTargets(proxy, "UPDATE biz SET n = 3 WHERE name = 'a'");
        assert.throws(() => assertSqliteWriteTargets(proxy, 'DELETE FROM pc_durable_tasks'), { message: /pc_durable_tasks/ });
      } finally {
        guarded.close();
      }
    });
  });

  test('an attached database or a temporary object cannot be mirrored: everything is refused', () => {
    db.exec("ATTACH ':memory:' AS side");
    try {
      inTransaction(db, () => assert.throws(() => assertSqliteWriteTargets(db, "UPDATE biz SET n = 4 WHERE name = 'z'"), { message: /attached database/ }));
    } finally {
      db.exec('DETACH side');
    }
    db.exec('CREATE TEMP TABLE scratch (a)');
    try {
      inTransaction(db, () => assert.throws(() => assertSqliteWriteTargets(db, "UPDATE biz SET n = 5 WHERE name = 'z'"), { message: /temporary objects/ }));
    } finally {
      db.exec('DROP TABLE temp.scratch');
    }
    inTransaction(db, () => assertSqliteWriteTargets(db, "UPDATE biz SET n = 6 WHERE name = 'z'")); // gone: mirrored again
  });

  test('an in-memory database is probed on a copy', () => {
    const mem = new Database(':memory:');
    try {
      for (const sql of SCHEMA) mem.exec(sql);
      mem.exec('CREATE TABLE pc_aps_signals (code TEXT)');
      inTransaction(mem, () => {
        assertSqliteWriteTargets(mem, "INSERT INTO biz (name, n) VALUES ('m', 1)");
        assert.throws(() => assertSqliteWriteTargets(mem, "INSERT INTO pc_aps_signals (code) VALUES ('x')"), { message: /pc_aps_signals/ });
      });
    } finally {
      mem.close();
    }
  });
});

describe('readProgram', () => {
  const op = (opcode: string, p1 = 0, p2 = 0, p3 = 0, p4: unknown = null, p5 = 0): ProgramOp => ({ opcode, p1, p2, p3, p4, p5 });
  const owners = new Map([
    ['0:2', { database: 'main', table: 'biz' }],
    ['0:3', { database: 'main', table: 'pc_aps_signals' }],
  ]);
  const read = (ops: ProgramOp[]) => readProgram(ops, (d, r) => owners.get(`${d}:${r}`) ?? null, 'vtab:1', isOwnTable);

  test('refuses the schema page, unknown b-trees, new b-trees and the refused opcodes and functions', () => {
    assert.deepEqual(read([op('OpenWrite', 0, 2)]), { refusal: null, writes: ['main.biz'] });
    assert.match(read([op('OpenWrite', 0, 1)]).refusal ?? '', /schema table/);
    assert.match(read([op('OpenWrite', 0, 9)]).refusal ?? '', /b-tree 9 of database 0/);
    assert.match(read([op('OpenWrite', 0, 7, 0, null, 0x10)]).refusal ?? '', /new b-tree/);
    assert.match(read([op('OpenWrite', 0, 2, 1)]).refusal ?? '', /database 1/, 'the temp database has no such table');
    assert.match(read([op('Clear', 3, 0)]).refusal ?? '', /pc_aps_signals/);
    assert.match(read([op('Function', 0, 0, 0, 'sqlite_attach(3)')]).refusal ?? '', /ATTACH/);
    assert.match(read([op('VOpen', 0, 0, 0, 'vtab:1')]).refusal ?? '', /PRAGMA optimize/);
    assert.equal(read([op('VOpen', 0, 0, 0, 'vtab:2'), op('Function', 0, 0, 0, 'printf(-1)')]).refusal, null);
    for (const opcode of ['AutoCommit', 'Savepoint', 'Expire', 'ParseSchema', 'SetCookie', 'Vacuum', 'JournalMode', 'Checkpoint', 'DropTable', 'VCreate'])
      assert.match(read([op(opcode)]).refusal ?? '', new RegExp(`\\[${opcode}\\]`), opcode);
  });
});
