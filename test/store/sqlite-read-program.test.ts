// src/store/sqlite/read-program.ts on a read-only connection: what the engine says about a read
// handle's statement. The read handles' behaviour (text checks off) is in
// test/adversarial/sqlite-engine.test.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { judgeRead, WRITES, type ReadVerdict } from '../../src/store/sqlite/read-program.ts';

let dir: string;
let reader: BetterSqlite3.Database;
const verdicts = new Map<string, ReadVerdict>();
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-read-program-'));
  const file = path.join(dir, 'db.sqlite');
  const writer = new Database(file);
  writer.pragma('journal_mode = WAL');
  writer.exec('CREATE TABLE t (a); INSERT INTO t VALUES (1)');
  writer.close();
  reader = new Database(file, { readonly: true, fileMustExist: true });
  reader.pragma('query_only = ON');
});
after(() => {
  reader.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const judge = (sql: string) => judgeRead(reader, reader.prepare(sql), sql, [], verdicts);

test('a read runs; its verdict is remembered', () => {
  const first = judge('SELECT a FROM t');
  assert.deepEqual(first, { refusal: null, recycle: false });
  assert.equal(judge('SELECT a FROM t'), first);
});

test('VACUUM INTO (which writes a file from a read-only connection) and every write are refused by sqlite3_stmt_readonly', () => {
  for (const sql of [`VACUUM INTO '${path.join(dir, 'copy.db')}'`, 'INSERT INTO t VALUES (2)', 'WITH x AS (SELECT 1) DELETE FROM t', 'BEGIN IMMEDIATE'])
    assert.deepEqual(judge(sql), { refusal: WRITES, recycle: true }, sql);
  assert.equal(fs.existsSync(path.join(dir, 'copy.db')), false, 'judging runs nothing');
});

test('what changes the connection or the transaction is refused, and the connection replaced', () => {
  for (const [sql, opcode] of [
    ['PRAGMA query_only = 0', 'Expire'],
    ['PRAGMA busy_timeout = 1', 'Expire'],
    ["ATTACH ':memory:' AS m", 'sqlite_attach'],
    ['BEGIN', 'AutoCommit'],
    ['SAVEPOINT s', 'Savepoint'],
  ]) {
    const verdict = judge(sql);
    assert.equal(verdict.recycle, true, sql);
    assert.match(verdict.refusal ?? '', new RegExp(`\\[${opcode}\\]`), sql);
  }
});

test('an EXPLAIN runs nothing but compiled its statement: allowed, the connection replaced', () => {
  assert.deepEqual(judge('EXPLAIN QUERY PLAN SELECT a FROM t'), { refusal: null, recycle: true });
  assert.deepEqual(judge('EXPLAIN PRAGMA locking_mode = EXCLUSIVE'), { refusal: null, recycle: true });
});
