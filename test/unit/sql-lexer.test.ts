// src/store/sql-lexer.ts: a statement read as MySQL/MariaDB tokenize it. The server itself
// confirms the model in test/store/sql-lexer-engines.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lexSql } from '../../src/store/sql-lexer.ts';

const words = (sql: string) => lexSql(sql).tokens.map((t) => `${t.kind}:${t.value}`);

test('words are upper-cased, identifiers unquoted, strings unescaped; comments are whitespace', () => {
  assert.deepEqual(words("select `a``b`, [c d], 'it''s', \"q\\\"r\" from db.t"), [
    'word:SELECT',
    'identifier:a`b',
    'punct:,',
    'identifier:c d',
    'punct:,',
    "string:it's",
    'punct:,',
    'string:q"r',
    'word:FROM',
    'word:DB',
    'punct:.',
    'word:T',
  ]);
  // `/**/` separates tokens: INTO/**/OUTFILE is INTO OUTFILE.
  assert.deepEqual(words("SELECT 'x' INTO/**/OUTFILE '/f'"), ['word:SELECT', 'string:x', 'word:INTO', 'word:OUTFILE', 'string:/f']);
  assert.deepEqual(words('SELECT 1 -- note\n+ 2 /* c */ # more\n'), ['word:SELECT', 'number:1', 'punct:+', 'number:2']);
  assert.deepEqual(words('SELECT 1 --'), ['word:SELECT', 'number:1'], '`--` at the end is a comment');
  assert.deepEqual(words('SELECT 1 --\t2\n'), ['word:SELECT', 'number:1'], '`--` and a control character');
  assert.deepEqual(words('SELECT 1 # c\r + 1'), ['word:SELECT', 'number:1'], '# ends at \\n only');
  assert.deepEqual(words('SELECT 1 /* /* */ + 1'), ['word:SELECT', 'number:1', 'punct:+', 'number:1'], 'comments do not nest');
});

test('`--` without a space is two minus signs (MySQL), listed as a disagreement with SQLite', () => {
  const lexed = lexSql('SELECT 5--3');
  assert.deepEqual(
    lexed.tokens.map((t) => t.value),
    ['SELECT', '5', '-', '-', '3'],
  );
  assert.equal(lexed.disagreements.length, 1);
  assert.match(lexed.disagreements[0]!.what, /--/);
});

test('executable comments, version comments and hints are code and are reported', () => {
  for (const [sql, marker, version] of [
    ["/*M! INSERT INTO t (c) */ (SELECT 'x')", 'M!', ''],
    ['/*!50000 UPDATE pc_x SET a = 1 */', '!', '50000'],
    ['/*M!100000 DELETE FROM pc_durable_task_control */', 'M!', '100000'],
    ['SELECT /*+ SET_VAR(max_statement_time=0) */ 1', '+', ''],
    ['SELECT 1 /*!*/', '!', ''],
  ] as const) {
    const lexed = lexSql(sql);
    assert.equal(lexed.hasExecutableComment, true, sql);
    assert.deepEqual(
      lexed.executableComments.map((c) => [c.marker, c.version]),
      [[marker, version]],
      sql,
    );
    assert.equal(lexed.unterminated, null, sql);
  }
  const lexed = lexSql("/*M! INSERT INTO t (c) */ (SELECT 'x')");
  assert.deepEqual(
    lexed.tokens.filter((t) => t.executable).map((t) => t.value),
    ['INSERT', 'INTO', 'T', '(', 'C', ')'],
  );
  // Inside one, a string may hold `*/` and a `-- ` comment runs past it (as on MariaDB).
  assert.deepEqual(words("SELECT /*! 'x*/' */ AS v"), ['word:SELECT', 'string:x*/', 'word:AS', 'word:V']);
  assert.deepEqual(words('SELECT 1 /*M! -- */ + 1\n */ AS v'), ['word:SELECT', 'number:1', 'word:AS', 'word:V']);
  assert.deepEqual(words('SELECT 1 /*!50000 /* inner */ + 1 */'), ['word:SELECT', 'number:1', 'punct:+', 'number:1']);
  // Lower-case m is a plain comment on MariaDB.
  assert.equal(lexSql('SELECT 1 /*m! + 1 */').hasExecutableComment, false);
});

test('statements are counted by their separators; a trailing one is not another statement', () => {
  assert.equal(lexSql('SELECT 1').statementCount, 1);
  assert.equal(lexSql('SELECT 1;  -- done').statementCount, 1);
  assert.equal(lexSql('SELECT 1;;').statementCount, 1);
  assert.equal(lexSql("SELECT ';'").statementCount, 1);
  assert.equal(lexSql('SELECT 1; SELECT 2').statementCount, 2);
  assert.equal(lexSql('SELECT 1 /*! ; DELETE FROM t */').statementCount, 2);
  assert.deepEqual(
    lexSql('SELECT 1; DELETE FROM t').tokens.map((t) => t.statement),
    [0, 0, 1, 1, 1],
  );
});

test('unterminated strings, names and comments are reported', () => {
  for (const [sql, construct] of [
    ["SELECT 'abc", 'string'],
    ["SELECT 'abc\\'", 'string'],
    ['SELECT "abc', 'string'],
    ['SELECT `abc', 'identifier'],
    ['SELECT [abc', 'identifier'],
    ['SELECT 1 /* never closed', 'comment'],
    ['/*! DELETE FROM t', 'executable comment'],
  ] as const) {
    assert.equal(lexSql(sql).unterminated?.construct, construct, sql);
  }
  assert.equal(lexSql("SELECT 'a\\\\'").unterminated, null, 'an escaped backslash before the quote');
});

test('where SQLite reads a statement differently, the lexer says so', () => {
  const what = (sql: string) => lexSql(sql).disagreements.map((d) => d.what);
  assert.deepEqual(what('SELECT 1 -- fine\n'), []);
  assert.match(what('SELECT 1 # note')[0]!, /#/);
  assert.match(what("SELECT 'a\\' ; DELETE FROM pc_aps_signals; -- '")[0]!, /backslash/);
  assert.deepEqual(what("SELECT 'a\\\\', 'C:\\path'"), [], 'backslashes that do not escape the quote agree');
  assert.match(what('SELECT 1\0; DROP TABLE t')[0]!, /NUL/);
});

test('variables, qualified names, numbers and SQLite-style quoted strings', () => {
  const lexed = lexSql("SELECT @a, @@session.autocommit, @'q r', 1e5, 0x1F, 1e, `db`.`pc_aps_signals`, 'pc_aps_signals'");
  assert.deepEqual(
    lexed.tokens.filter((t) => t.value !== ',').map((t) => `${t.kind}:${t.value}`),
    [
      'word:SELECT',
      'variable:a',
      'variable:session.autocommit',
      'variable:q r',
      'number:1e5',
      'number:0x1F',
      'word:1E',
      'identifier:db',
      'punct:.',
      'identifier:pc_aps_signals',
      'string:pc_aps_signals',
    ],
  );
  // raw: the content as SQLite reads it (no backslash escapes).
  const s = lexSql("SELECT 'pc_aps_sign\\als'").tokens[1]!;
  assert.deepEqual([s.value, s.raw], ['pc_aps_signals', 'pc_aps_sign\\als']);
});
