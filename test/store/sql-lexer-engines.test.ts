// The lexer's model (src/store/sql-lexer.ts) checked against the engines themselves: the local
// MariaDB, in the store's session (its sql_mode), and SQLite through better-sqlite3. Each case
// states what the lexer reads and shows the engine reading the same; where SQLite reads a
// statement differently, the lexer lists a disagreement and the checks refuse it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl, type DatabaseTarget } from '../../src/config/database-url.ts';
import { MYSQL_SESSION_SETUP } from '../../src/store/mysql/mysql-session.ts';
import { calledFunctions } from '../../src/store/read-statement.ts';
import { lexSql } from '../../src/store/sql-lexer.ts';
import { MYSQL_TEST_URL } from '../helpers/backends.ts';

const values = (sql: string) => lexSql(sql).tokens.map((t) => t.value);

describe('[mysql] the lexer reads a statement as MariaDB does', () => {
  let conn: mysql.Connection;
  const one = async (sql: string): Promise<unknown> => {
    const [rows] = await conn.query(sql);
    return Object.values((rows as Record<string, unknown>[])[0]!)[0];
  };
  const errno = async (sql: string): Promise<number | undefined> => {
    try {
      await conn.query(sql);
    } catch (error) {
      return (error as { errno?: number }).errno;
    }
    return undefined;
  };

  before(async () => {
    const t = parseDatabaseUrl(MYSQL_TEST_URL, 'APSUP_TEST_MYSQL_URL') as Extract<DatabaseTarget, { backend: 'mysql' }>;
    conn = await mysql.createConnection({ host: t.host, port: t.port, user: t.user, password: t.password, database: t.database });
    for (const sql of MYSQL_SESSION_SETUP) await conn.query(sql);
  });
  after(async () => {
    await conn?.end();
  });

  test('`--x` is two minus signs; `-- `, `--` and a control character, or `--` at the end are comments', async () => {
    assert.equal(Number(await one('SELECT 5--3 AS v')), 8);
    assert.deepEqual(values('SELECT 5--3 AS v'), ['SELECT', '5', '-', '-', '3', 'AS', 'V']);
    assert.equal(Number(await one('SELECT 5 -- 3\n AS v')), 5);
    assert.equal(Number(await one('SELECT 5 --\x013\n+1 AS v')), 6);
    assert.equal(Number(await one('SELECT 5 --\x7f3\n+1 AS v')), 6);
    assert.deepEqual(values('SELECT 5 --\x013\n+1 AS v'), ['SELECT', '5', '+', '1', 'AS', 'V']);
    assert.equal(Number(await one('SELECT 5 --')), 5);
    // A no-break space is not a space: `-- 3` here is minus, minus, a column named " 3".
    assert.equal(await errno('SELECT 5 --\u00a03\n+1 AS v'), 1054);
    assert.deepEqual(values('SELECT 5 --\u00a03'), ['SELECT', '5', '-', '-', '\u00a03']);
  });

  test('`#` runs to \\n only; `/* */` is whitespace, `/**/` included, and does not nest', async () => {
    assert.equal(Number(await one('SELECT 1 # c\n + 1 AS v')), 2);
    assert.equal(Number(await one('SELECT 1 # c\r + 1 AS v')), 1);
    assert.deepEqual(values('SELECT 1 # c\r + 1 AS v'), ['SELECT', '1']);
    await conn.query('SELECT 7 INTO/**/@apsup_lexer_v');
    assert.equal(Number(await one('SELECT @apsup_lexer_v')), 7);
    assert.deepEqual(values('SELECT 7 INTO/**/@apsup_lexer_v'), ['SELECT', '7', 'INTO', 'apsup_lexer_v']);
    assert.equal(Number(await one('SELECT 1 /* /* */ + 1 AS v')), 2);
    assert.equal(await errno('SELECT 1 /* never closed'), 1064);
    assert.equal(lexSql('SELECT 1 /* never closed').unterminated?.construct, 'comment');
  });

  test('executable and version comments run as code; the lexer reports every one, whatever its version', async () => {
    for (const sql of ['SELECT 1 /*M! + 1 */ AS v', 'SELECT 1 /*! + 1 */ AS v', 'SELECT 1 /*!50000 + 1 */ AS v', 'SELECT 1 /*M!100000 + 1 */ AS v']) {
      assert.equal(Number(await one(sql)), 2, sql);
      const lexed = lexSql(sql);
      assert.equal(lexed.hasExecutableComment, true, sql);
      assert.deepEqual(
        lexed.tokens.filter((t) => t.executable).map((t) => t.value),
        ['+', '1'],
        sql,
      );
    }
    // A version above the server's is skipped by this server, run by a later one: still reported.
    assert.equal(Number(await one('SELECT 1 /*M!999999 + 1 */ AS v')), 1);
    assert.equal(lexSql('SELECT 1 /*M!999999 + 1 */ AS v').hasExecutableComment, true);
    // Its content is code: a string may hold `*/`, a `-- ` comment runs past one, a plain comment nests.
    assert.equal(await one("SELECT /*! 'x*/' */ AS v"), 'x*/');
    assert.deepEqual(values("SELECT /*! 'x*/' */ AS v"), ['SELECT', 'x*/', 'AS', 'V']);
    assert.equal(Number(await one('SELECT 1 /*M! -- */ + 1\n */ AS v')), 1);
    assert.equal(Number(await one('SELECT 1 /*!50000 /* inner */ + 1 */ AS v')), 2);
    // Lower-case m is a plain comment.
    assert.equal(Number(await one('SELECT 1 /*m! + 1 */ AS v')), 1);
    assert.equal(lexSql('SELECT 1 /*m! + 1 */').hasExecutableComment, false);
    // MariaDB 10.11 reads a hint as a comment, MySQL 8 as code (SET_VAR ...): reported either way.
    assert.equal(Number(await one('SELECT /*+ 2 + */ 1 AS v')), 1);
    assert.equal(lexSql('SELECT /*+ 2 + */ 1').hasExecutableComment, true);
  });

  test('strings, names, separators and calls as the store session reads them', async () => {
    assert.equal(await one("SELECT 'a\\'b' AS v"), "a'b");
    assert.equal(lexSql("SELECT 'a\\'b'").tokens[1]!.value, "a'b");
    assert.equal(await one('SELECT "a\\"b" AS v'), 'a"b', 'double quotes delimit strings (no ANSI_QUOTES)');
    assert.deepEqual(
      lexSql('SELECT "a\\"b"').tokens.map((t) => [t.kind, t.value]),
      [
        ['word', 'SELECT'],
        ['string', 'a"b'],
      ],
    );
    const [, fields] = await conn.query('SELECT 1 AS `a``b`');
    assert.equal((fields as Array<{ name: string }>)[0]!.name, 'a`b');
    assert.equal(lexSql('SELECT 1 AS `a``b`').tokens[3]!.value, 'a`b');
    assert.equal(await errno('SELECT 1; SELECT 2'), 1064, 'one statement per call');
    assert.equal(lexSql('SELECT 1; SELECT 2').statementCount, 2);
    assert.equal(Number(await one('SELECT 1;')), 1);
    assert.equal(lexSql('SELECT 1;').statementCount, 1);
    assert.equal(Number(await one('SELECT SLEEP/**/(0) AS v')), 0, 'a call through a comment');
    assert.deepEqual(calledFunctions(lexSql('SELECT SLEEP/**/(0)').tokens), ['SLEEP']);
    assert.equal(Number(await one('SELECT COUNT(*) FROM information_schema . tables WHERE 1 = 0')), 0, 'a qualified name with spaces');
    assert.equal(Number(await one('SELECT 1 AS 1e')), 1, 'a name may start with a digit');
    assert.deepEqual(
      lexSql('SELECT 1 AS 1e').tokens.map((t) => t.kind),
      ['word', 'number', 'word', 'word'],
    );
  });
});

describe('the lexer marks where SQLite reads a statement differently', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE pc_x (a INT); INSERT INTO pc_x VALUES (7)');
  after(() => db.close());
  const disagrees = (sql: string) => lexSql(sql).disagreements.length > 0;

  test('`--x` is a comment to SQLite, `#` is code, a backslash escapes nothing, a NUL ends the text', () => {
    assert.equal(Number(Object.values(db.prepare('SELECT 5--3 AS v').get() as object)[0]), 5);
    assert.ok(disagrees('SELECT 5--3'));
    assert.throws(() => db.prepare('SELECT 1 # x'), /unrecognized token/);
    assert.ok(disagrees('SELECT 1 # x'));
    assert.equal((db.prepare("SELECT 'a\\' AS v").get() as { v: string }).v, 'a\\');
    assert.ok(disagrees("SELECT 'a\\' AS v'"));
    assert.equal((db.prepare('SELECT 1 AS v\0; DROP TABLE pc_x').get() as { v: number }).v, 1);
    assert.ok(disagrees('SELECT 1 AS v\0; DROP TABLE pc_x'));
  });

  test('SQLite takes a quoted string or a [bracketed] name for a table name: the lexer keeps both', () => {
    assert.equal((db.prepare("SELECT a FROM 'pc_x'").get() as { a: number }).a, 7);
    assert.equal(db.prepare("DELETE FROM 'pc_x'").reader, false);
    assert.equal((db.prepare('SELECT a FROM [pc_x]').get() as { a: number }).a, 7);
    assert.deepEqual(
      lexSql("SELECT a FROM 'pc_x', [pc_x]").tokens.map((t) => [t.kind, t.value]),
      [
        ['word', 'SELECT'],
        ['word', 'A'],
        ['word', 'FROM'],
        ['string', 'pc_x'],
        ['punct', ','],
        ['identifier', 'pc_x'],
      ],
    );
  });
});
