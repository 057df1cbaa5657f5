// The friendly checks of the read handle and of ctx.commit's scoped handle (src/store/read-statement.ts,
// src/store/scoped-tx.ts), read as the server tokenizes the statement (src/store/sql-lexer.ts).
// The database is the authority (test/adversarial/ runs these attacks with the checks off); here
// every attack of issue 40 must already be refused, and ordinary business statements must pass.
import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { TEXT_CHECKS_SWITCH, assertReadStatement, firstKeyword } from '../../src/store/read-statement.ts';
import { assertTxStatement, scopedTx } from '../../src/store/scoped-tx.ts';

const refused = { name: 'ReadOnlyError', code: 'read_only' };
const readRefused = (sql: string, params?: unknown[]) => assert.throws(() => assertReadStatement('t', sql, params), refused, sql);
const txRefused = (sql: string, params?: unknown[]) => assert.throws(() => assertTxStatement(sql, params), refused, sql);
const reason = (fn: () => void) => {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  return 'passed';
};

afterEach(() => {
  delete process.env[TEXT_CHECKS_SWITCH];
});

test('firstKeyword skips comments and parentheses, and reports an executable comment first', () => {
  assert.equal(firstKeyword('  select 1'), 'SELECT');
  assert.equal(firstKeyword('-- x\n/* y */ ((WITH a AS (SELECT 1) SELECT * FROM a))'), 'WITH');
  assert.equal(firstKeyword('/**/SHOW tables'), 'SHOW');
  assert.equal(firstKeyword('/*!50000 INSERT */ SELECT 1'), '/*!');
  assert.equal(firstKeyword("/*M! INSERT INTO t (c) */ (SELECT 'x')"), '/*!');
  assert.equal(firstKeyword('(/*+ hint */ SELECT 1)'), '/*!');
  assert.equal(firstKeyword('/* never closed'), '');
  assert.equal(firstKeyword("'text'"), '');
});

test('the read handle sends reads, whatever their comments, strings and parentheses', () => {
  for (const sql of [
    'SELECT 1',
    'with x as (select 1) select * from x',
    'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3) SELECT n FROM c',
    '(((SELECT 1)))',
    'EXPLAIN SELECT 1',
    'VALUES (1)',
    'TABLE biz',
    'SHOW CREATE TABLE biz',
    'DESC biz',
    'SELECT 1;',
    'SELECT 1 -- a note\n',
    'SELECT 1 /* a note */ FROM biz',
    "SELECT '-- not a comment', '/* nor this */', '#', 'INTO OUTFILE', 'x; DELETE FROM t' FROM biz",
    "SELECT REPLACE(name, 'a', 'b'), INSERT(name, 1, 1, 'x') FROM biz WHERE note = ? LIMIT ?",
    'SELECT update_time, `update`, "delete" FROM biz ORDER BY id DESC',
    "SELECT * FROM biz WHERE body LIKE '%pc_aps_signals%'",
    'SELECT 2 - -3',
  ])
    assertReadStatement('t', sql);
});

test('the read handle refuses writes, hidden code, file and variable writes, locks and sleeps', () => {
  for (const sql of [
    'INSERT INTO t VALUES (1)',
    'SET SESSION TRANSACTION READ WRITE',
    'BEGIN',
    'COMMIT',
    "CALL pc_aps_invalidate_term('global', NULL, NULL)",
    'DROP TABLE t',
    'PRAGMA query_only = OFF',
    'ATTACH DATABASE "x" AS y',
    'HANDLER biz OPEN',
    "LOAD DATA INFILE '/etc/hostname' INTO TABLE biz",
    'LOCK TABLES biz WRITE',
    // issue 40: MariaDB runs /*M! */, both run /*! */ (with or without a version).
    '/*! DELETE FROM t */',
    '/*M! SET SESSION tx_read_only = */ (SELECT 0)',
    "/*M! INSERT INTO t (c) */ (SELECT 'x')",
    '/*!50000 INSERT INTO t (c) */ SELECT 1',
    '/*M!100000 INSERT INTO t (c) */ SELECT 1',
    'SELECT 1 /*!50000 , (SELECT 1 FROM t FOR UPDATE) */',
    'SELECT /*+ SET_VAR(max_statement_time=0) */ 1',
    '((/*M! INSERT INTO t (c) */ (SELECT 1)))',
    // INTO, whatever separates the words.
    "SELECT 'x' INTO OUTFILE '/tmp/x'",
    "SELECT 'x' INTO/**/OUTFILE '/tmp/x'",
    "SELECT 'x' INTO\nDUMPFILE '/tmp/x'",
    "SELECT 'x' INTO -- c\n OUTFILE '/tmp/x'",
    'SELECT 1 INTO @one',
    'SELECT 1 INTO @`one`',
    'SELECT 1 INTO one',
    // A WITH leads into a write on MySQL 8 and SQLite; EXPLAIN ANALYZE runs it.
    'WITH x AS (SELECT 1) DELETE FROM t',
    'WITH x AS (SELECT 1) UPDATE t SET a = 1',
    'EXPLAIN ANALYZE DELETE FROM t',
    // Locking reads and waits.
    'SELECT * FROM biz FOR UPDATE',
    'SELECT * FROM biz FOR SHARE',
    'SELECT * FROM biz LOCK IN SHARE MODE',
    "SELECT GET_LOCK('x', 10)",
    "SELECT RELEASE_LOCK('x')",
    'SELECT RELEASE_ALL_LOCKS()',
    'SELECT SLEEP(5)',
    'SELECT SLEEP/**/(5)',
    'SELECT `sleep`(5)',
    "SELECT BENCHMARK(100000000, MD5('x'))",
    "SELECT LOAD_FILE('/etc/passwd')",
    // More than one statement, and what the dialects read differently.
    'SELECT 1; DELETE FROM t',
    'SELECT 1 -- x\n; DELETE FROM t',
    'SELECT 5--3',
    'SELECT 1 # note',
    "SELECT 'a\\' ; DELETE FROM t; -- '",
    'SELECT 1\0; DELETE FROM t',
    // Unterminated.
    "SELECT 'x",
    'SELECT 1 /* x',
    '/*! SELECT 1',
    // Names spliced in by the MySQL driver.
    'SELECT * FROM ??',
    '',
    '   ',
  ])
    readRefused(sql);
  assert.throws(() => assertReadStatement('t', 42), refused);
  readRefused('SELECT ?', [{ toSqlString: () => "1 INTO OUTFILE '/tmp/x'" }]);
  readRefused('SELECT ?', [[1, { toSqlString: () => '2' }]]);
});

test('the refusals say what was seen', () => {
  assert.match(
    reason(() => assertReadStatement('t', "/*M! INSERT INTO t (c) */ (SELECT 'x')")),
    /\/\*M! \.\.\. \*\/ is code to MySQL\/MariaDB/,
  );
  assert.match(
    reason(() => assertReadStatement('t', "SELECT 'x' INTO/**/OUTFILE '/f'")),
    /INTO OUTFILE writes a server file/,
  );
  assert.match(
    reason(() => assertReadStatement('t', 'SELECT 1 INTO @v')),
    /session variable/,
  );
  assert.match(
    reason(() => assertReadStatement('t', 'SELECT 1; SELECT 2')),
    /more than one statement/,
  );
  assert.match(
    reason(() => assertReadStatement('t', 'SELECT 5--3')),
    /read it differently/,
  );
  assert.match(
    reason(() => assertReadStatement('t', "SELECT 'x")),
    /unterminated string/,
  );
  assert.match(
    reason(() => assertTxStatement('SELECT * FROM pc_artifact_processing_leases FOR UPDATE')),
    /FOR UPDATE on pc_artifact_processing_leases/,
  );
  assert.match(
    reason(() => assertTxStatement('DELETE FROM `pc_durable_tasks`')),
    /tables \(pc_durable_tasks\) are read and written only by their operations/,
  );
  assert.match(
    reason(() => assertTxStatement('XA START 1')),
    /XA statements cannot run in a fenced transaction/,
  );
});

test('a fenced transaction runs business statements, business locks included', () => {
  for (const sql of [
    'INSERT INTO my_progress VALUES (1)',
    'UPDATE my_progress SET v = 2',
    'DELETE FROM my_rows WHERE id = 3',
    'REPLACE INTO my_rows VALUES (1)',
    'INSERT IGNORE INTO my_rows VALUES (1)',
    'INSERT OR REPLACE INTO my_rows VALUES (1)',
    'INSERT INTO my_rows (a) SELECT a FROM other_rows ON DUPLICATE KEY UPDATE a = VALUES(a)',
    'WITH x AS (SELECT 1 AS a) SELECT a FROM x',
    'DO SLEEP(1)', // bounded by the database (the commit watchdog), not by text
    'SELECT through_seq FROM ref_topic_cursors WHERE scope_id = ? FOR UPDATE',
    'SELECT * FROM my_rows LOCK IN SHARE MODE',
    'UPDATE biz SET c = @one',
    "INSERT INTO notes (body) VALUES ('see pc_aps_signals; DELETE FROM pc_durable_tasks -- gone')",
    "UPDATE notes SET body = '-- /* pc_artifact_processing_leases */ #' WHERE id = ?",
    "INSERT INTO notes (body) VALUES ('*/ SELECT 1 FROM pc_aps_adoptions /*')",
    "INSERT INTO notes (body) VALUES ('pc_aps_signals changed')",
    // PR #1490's Topic tables belong to the Topic processor, not to the supervisor.
    'UPDATE pc_artifact_processing_pending SET flushed_generation = 2',
    'INSERT INTO pc_artifact_processing_source_cursors VALUES (1)',
  ])
    assertTxStatement(sql);
  assertTxStatement('INSERT INTO t (a, b, c) VALUES (?, ?, ?)', ['x', new Date(0), Buffer.from('y')]);
  assertTxStatement('INSERT INTO t SET ?', [{ a: 1, b: 'pc_aps_signals' }]);
});

test('a fenced transaction refuses control statements, hidden code and every mention of the own tables', () => {
  for (const sql of [
    'COMMIT',
    'ROLLBACK',
    'ROLLBACK TO SAVEPOINT a',
    'BEGIN',
    'START TRANSACTION',
    'SAVEPOINT a',
    'RELEASE SAVEPOINT a',
    "XA START 'x'",
    'XA END 1',
    'SET autocommit = 1',
    'SET STATEMENT max_statement_time = 0 FOR UPDATE my_rows SET a = 1',
    'SET STATEMENT max_statement_time = 0 FOR UPDATE pc_artifact_processing_leases SET expires_at = NULL',
    'CREATE TABLE t (a INT)',
    'ALTER TABLE t ADD b INT',
    'TRUNCATE t',
    'RENAME TABLE a TO b',
    'GRANT ALL ON db.* TO CURRENT_USER',
    "CALL pc_aps_acquire_term('global', 'x', 1000)",
    "PREPARE s FROM 'DELETE FROM t'",
    'EXECUTE s',
    'LOCK TABLES t WRITE',
    'LOCK TABLES pc_artifact_processing_leases WRITE',
    'UNLOCK TABLES',
    'HANDLER pc_artifact_processing_leases OPEN',
    "LOAD DATA INFILE '/etc/hostname' INTO TABLE pc_artifact_processing_intents",
    'SHOW TABLES',
    'PRAGMA writable_schema = ON',
    // issue 40 section 1: writes hidden in executable comments.
    "/*M! UPDATE pc_artifact_processing_leases SET expires_at = */ (SELECT '2099-01-01')",
    '/*M! DELETE FROM pc_artifact_processing_intents WHERE 1 = */ (SELECT 1)',
    '/*!50000 UPDATE pc_artifact_processing_intents SET handled_generation = requested_generation */',
    '/*M!100000 DELETE FROM pc_durable_task_control */',
    '/*M! CREATE TABLE t (a INT) */ SELECT 1',
    'SELECT 1 /*+ SET_VAR(max_statement_time=0) */',
    // Own tables, however named, in any statement.
    'UPDATE pc_artifact_processing_leases SET holder_id = NULL',
    "UPDATE pc_durable_tasks SET state = 'succeeded'",
    'INSERT INTO pc_artifact_processing_intents (binding_name) VALUES (1)',
    'DELETE FROM PC_DURABLE_TASKS',
    'UPDATE pc_aps_adoptions SET x = 1',
    'UPDATE `pc_aps_batch_ordinals` SET n = 0',
    'UPDATE `apsup`.`pc_artifact_processing_leases` SET expires_at = NULL',
    'UPDATE apsup.pc_artifact_processing_leases SET expires_at = NULL',
    'UPDATE apsup . pc_artifact_processing_leases SET expires_at = NULL',
    'UPDATE/**/pc_artifact_processing_leases/**/SET expires_at = NULL',
    'UPDATE "pc_artifact_processing_leases" SET expires_at = NULL',
    "DELETE FROM 'pc_aps_signals'",
    'DELETE FROM [pc_aps_signals]',
    'DELETE FROM main.pc_durable_task_workers',
    'INSERT INTO pc_task_submit_batch_items VALUES (1)',
    'INSERT INTO pc_task_future_batch_items VALUES (1)',
    'SELECT state FROM pc_durable_tasks WHERE task_id = 1',
    'SELECT * FROM pc_artifact_processing_leases FOR UPDATE',
    '((((SELECT * FROM pc_artifact_processing_leases FOR UPDATE))))',
    'SELECT * FROM pc_artifact_processing_intents LOCK IN SHARE MODE',
    'DO (SELECT COUNT(*) FROM pc_artifact_processing_leases FOR UPDATE)',
    'WITH l AS (SELECT 1) UPDATE pc_artifact_processing_leases SET holder_id = NULL',
    'INSERT INTO my_rows SELECT * FROM pc_aps_signals',
    'UPDATE my_rows, pc_aps_signals SET my_rows.a = 1',
    "SELECT 1 /* ' */ FROM pc_aps_signals WHERE '*/' = '*/'",
    "SELECT '-- ', 1 FROM pc_aps_signals",
    // INTO a file or a variable (then used in a write).
    "SELECT 'x' INTO/**/OUTFILE '/tmp/x'",
    "SELECT 'x' INTO DUMPFILE '/tmp/x'",
    'SELECT 1 INTO @one',
    'SELECT 1 FROM my_rows INTO @one',
    'SELECT 1 INTO one',
    'UPDATE pc_artifact_processing_leases SET expires_at = @one',
    // Locks outside the transaction, files.
    "DO GET_LOCK('apsup', 10)",
    "SELECT RELEASE_LOCK('apsup')",
    'DO RELEASE_ALL_LOCKS()',
    "INSERT INTO notes (body) SELECT LOAD_FILE('/etc/passwd')",
    "SELECT load_extension('/tmp/x.so')",
    // Several statements, dialect tricks, unterminated text.
    'INSERT INTO my_rows VALUES (1); DELETE FROM pc_aps_signals',
    "INSERT INTO my_rows VALUES ('a\\'); DELETE FROM pc_aps_signals; -- ')",
    'UPDATE my_rows SET a = 5--1',
    'UPDATE my_rows SET a = 1 # note',
    "UPDATE my_rows SET a = 'x",
    'UPDATE my_rows SET a = 1 /* x',
    'SELECT * FROM ??',
  ])
    txRefused(sql);
  txRefused('SELECT ? FROM my_rows', [{ toSqlString: () => '1 FROM pc_aps_signals --' }]);
  txRefused('UPDATE my_rows SET ?', [{ 'pc_aps_signals.x': 1 }]);
  txRefused('INSERT INTO my_rows SET ?', [new Map([['pc_durable_tasks.state', 'x']])]);
  txRefused('SELECT * FROM ??', ['pc_artifact_processing_leases']);
});

test(`${TEXT_CHECKS_SWITCH}=1 turns the text checks off at call time, but never accepts an empty statement`, () => {
  const attack = "/*M! UPDATE pc_artifact_processing_leases SET expires_at = */ (SELECT '2099-01-01')";
  txRefused(attack);
  readRefused(attack);
  process.env[TEXT_CHECKS_SWITCH] = '1';
  assertTxStatement(attack);
  assertReadStatement('t', attack);
  assertReadStatement('t', 'SELECT * FROM ??', ['x']);
  txRefused('');
  readRefused('  ');
  assert.throws(() => assertTxStatement(undefined), refused);
  process.env[TEXT_CHECKS_SWITCH] = 'true';
  txRefused(attack); // only 1 switches them off
  delete process.env[TEXT_CHECKS_SWITCH];
  txRefused(attack);
});

test('a scoped handle checks each statement with its parameters, and is dead once its transaction ended', async () => {
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
  await assert.rejects(scoped.tx.query('SELECT * FROM ??', ['pc_artifact_processing_leases']), refused);
  await assert.rejects(scoped.tx.query('SELECT ?', [{ toSqlString: () => '1' }]), refused);
  scoped.end();
  await assert.rejects(scoped.tx.query('SELECT 2'), { name: 'TransactionClosedError', code: 'transaction_closed' });
  assert.deepEqual(sent, ['SELECT 1']);
  assert.ok(Object.isFrozen(scoped.tx));
});
