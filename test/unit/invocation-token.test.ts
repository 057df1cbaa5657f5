// The host's invocation token (src/store/invocation-token.ts) is the procedure's formula exactly:
// computed here and by MariaDB's SHA2 over the same fields (non-ASCII scope ids included).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl } from '../../src/config/database-url.ts';
import { invocationToken, secretCandidate } from '../../src/store/invocation-token.ts';
import { MYSQL_TEST_URL } from '../helpers/backends.ts';

test('[mysql] the TypeScript token equals the SQL formula of pc_aps_ack_invocation_token', async () => {
  const t = parseDatabaseUrl(MYSQL_TEST_URL, 'APSUP_TEST_MYSQL_URL');
  assert.ok(t.backend === 'mysql');
  const conn = await mysql.createConnection({ host: t.host, port: t.port, user: t.user, password: t.password, database: t.database, charset: 'utf8mb4' });
  try {
    const secret = secretCandidate();
    assert.match(secret, /^[0-9a-f]{64}$/);
    for (const [scope, gen] of [
      ['scope-1', 1],
      ['Ünïcødé/範囲', 9007199254740991],
    ] as const) {
      const term = { supervisorKey: 'artifact:topic-memory', holderId: 'vm:1:abc', supervisorGeneration: 42 };
      const [rows] = await conn.query(
        `SELECT SHA2(CONCAT(?, '|', SHA2(CONCAT(?, '|', ?, '|', ?, '|', CAST(? AS SIGNED), '|', ?, '|', ?, '|', CAST(? AS SIGNED)), 256)), 256) AS token`,
        [secret, secret, term.supervisorKey, term.holderId, term.supervisorGeneration, 'topic-memory.pending', scope, gen],
      );
      assert.equal(invocationToken(secret, term, 'topic-memory.pending', scope, gen), (rows as Array<{ token: string }>)[0]!.token);
    }
    assert.notEqual(
      invocationToken(secret, { supervisorKey: 'global', holderId: 'h', supervisorGeneration: 1 }, 'b', 's', 1),
      invocationToken(secret, { supervisorKey: 'global', holderId: 'h', supervisorGeneration: 1 }, 'b', 's2', 1),
    );
  } finally {
    await conn.end();
  }
});
