// The SQLite script runner (src/store/sqlite/script.ts): a `-- @done-if-rows` fast path ends the
// script with its rows when it returns any, and lets the full path run when it returns none.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { parseSqliteScript, runStatements } from '../../src/store/sqlite/script.ts';

const SCRIPT = `-- op: a counter that moves only forward
-- @done-if-rows
UPDATE t SET n = :to WHERE id = 1 AND n < :to RETURNING id, n, 'moved' AS outcome;
-- Full path.
INSERT INTO log (what) VALUES ('full path');
SELECT id, n, 'kept' AS outcome FROM t WHERE id = 1;`;

function database() {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER); INSERT INTO t VALUES (1, 0); CREATE TABLE log (what TEXT)');
  return db;
}

test('the fast path that writes is the result, and nothing after it runs', () => {
  const db = database();
  const script = parseSqliteScript('op', SCRIPT);
  assert.deepEqual([...script.doneIfRows], [0]);
  assert.deepEqual(runStatements(db, script, { to: 5 }), [[{ id: 1, n: 5, outcome: 'moved' }]]);
  assert.equal((db.prepare('SELECT COUNT(*) AS c FROM log').get() as { c: number }).c, 0, 'the full path did not run');
});

test('a fast path that writes nothing leaves the result to the full path (its empty set is not a result)', () => {
  const db = database();
  const script = parseSqliteScript('op', SCRIPT);
  runStatements(db, script, { to: 5 });
  assert.deepEqual(runStatements(db, script, { to: 3 }), [[{ id: 1, n: 5, outcome: 'kept' }]]);
  assert.equal((db.prepare('SELECT COUNT(*) AS c FROM log').get() as { c: number }).c, 1);
});

test('the marker belongs on a statement that returns rows; transaction lines are not statements', () => {
  assert.throws(() => parseSqliteScript('bad', '-- @done-if-rows\nUPDATE t SET n = 1;\nSELECT 1;'), /must return rows/);
  const owned = parseSqliteScript('own', `BEGIN IMMEDIATE;\n${SCRIPT}\nCOMMIT;`);
  assert.equal(owned.ownsTransaction, true);
  assert.deepEqual([...owned.doneIfRows], [0]);
  assert.equal(owned.statements.length, 3);
});
