// The statement guards of the read handle and of ctx.commit's scoped handle (src/store/read-handle.ts,
// src/store/scoped-tx.ts). The database is the authority on writes; these guards keep statements
// that would change the session or end the transaction from ever being sent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertReadStatement, firstKeyword } from '../../src/store/read-statement.ts';
import { assertTxStatement, scopedTx } from '../../src/store/scoped-tx.ts';

test('firstKeyword skips whitespace, comments and parentheses, but not executable /*! */ comments', () => {
  assert.equal(firstKeyword('  select 1'), 'SELECT');
  assert.equal(firstKeyword('-- x\n/* y */ (WITH a AS (SELECT 1) SELECT * FROM a)'), 'WITH');
  assert.equal(firstKeyword('# note\nshow tables'), 'SHOW');
  assert.equal(firstKeyword('/*!50000 INSERT */ SELECT 1'), '/*!');
  assert.equal(firstKeyword('/* never closed'), '');
});

test('the read handle sends only reads', () => {
  for (const sql of ['SELECT 1', 'with x as (select 1) select * from x', 'EXPLAIN SELECT 1', 'VALUES (1)']) assertReadStatement('t', sql);
  for (const sql of [
    'INSERT INTO t VALUES (1)',
    'SET SESSION TRANSACTION READ WRITE',
    'BEGIN',
    'COMMIT',
    "CALL pc_aps_invalidate_term('global', NULL, NULL)",
    'DROP TABLE t',
    'PRAGMA query_only = OFF',
    'ATTACH DATABASE "x" AS y',
    '/*! DELETE FROM t */',
    '',
    '   ',
  ]) {
    assert.throws(() => assertReadStatement('t', sql), { name: 'ReadOnlyError', code: 'read_only' }, sql);
  }
  assert.throws(() => assertReadStatement('t', 42), { name: 'ReadOnlyError' });
});

test('a fenced transaction refuses transaction control, DDL, CALL and writes to the supervisor tables', () => {
  for (const sql of [
    'INSERT INTO my_progress VALUES (1)',
    'UPDATE my_progress SET v = 2',
    'SELECT state FROM pc_durable_tasks WHERE task_id = 1',
    'DELETE FROM my_rows WHERE id = 3',
    'REPLACE INTO my_rows VALUES (1)',
    'DO SLEEP(1)',
    // PR #1490's Topic tables belong to the Topic processor, not to the supervisor.
    'UPDATE pc_artifact_processing_pending SET flushed_generation = 2',
    'INSERT INTO pc_artifact_processing_source_cursors VALUES (1)',
  ])
    assertTxStatement(sql);
  for (const sql of [
    'COMMIT',
    'ROLLBACK',
    'BEGIN',
    'SAVEPOINT a',
    'SET autocommit = 1',
    'CREATE TABLE t (a INT)',
    'ALTER TABLE t ADD b INT',
    'TRUNCATE t',
    "CALL pc_aps_acquire_term('global', 'x', 1000)",
    'LOCK TABLES t WRITE',
    'UPDATE pc_artifact_processing_leases SET holder_id = NULL',
    "UPDATE pc_durable_tasks SET state = 'succeeded'",
    'INSERT INTO pc_artifact_processing_intents (binding_name) VALUES (1)',
    'DELETE FROM PC_DURABLE_TASKS',
    'UPDATE pc_aps_adoptions SET x = 1',
  ]) {
    assert.throws(() => assertTxStatement(sql), { name: 'ReadOnlyError', code: 'read_only' }, sql);
  }
});

test('a scoped handle is dead once its transaction ended', async () => {
  const sent: string[] = [];
  const raw = {
    query: async (sql: string) => {
      sent.push(sql);
      return [[], []];
    },
    execute: async () => [],
  } as never;
  const scoped = scopedTx(raw, 'mysql');
  await scoped.tx.query('SELECT 1');
  scoped.end();
  await assert.rejects(scoped.tx.query('SELECT 2'), { name: 'TransactionClosedError', code: 'transaction_closed' });
  assert.deepEqual(sent, ['SELECT 1']);
  assert.ok(Object.isFrozen(scoped.tx));
});
