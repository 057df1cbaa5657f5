// MySQL/OceanBase session and database settings the stored logic depends on (COMPATIBILITY rows on
// isolation, sql_mode and the character set):
//   * every pool connection and the migration connection run READ COMMITTED with the pinned
//     sql_mode (no NO_BACKSLASH_ESCAPES), verified before use; procedures are created with it;
//   * every pool connection is bounded on the server in how long a transaction may stay idle
//     (transaction-bound.ts; the SIGSTOP test is paused-worker.test.ts);
//   * a connection the caller passes in is checked once: another isolation level or
//     NO_BACKSLASH_ESCAPES is refused with a clear error, and nothing is written;
//   * a database whose default character set is not utf8mb4 is refused by `migrate up` before any
//     migration runs; in a database created with the server default (utf8mb4_general_ci here) the
//     keys and holder ids are still compared exactly (case, non-ASCII, quotes and backslashes).
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl, type DatabaseTarget } from '../../../src/config/database-url.ts';
import { migrateTarget } from '../../../src/devtools/ephemeral-database.ts';
import { MigrationDriftError } from '../../../src/migrations/migrator.ts';
import { InvalidArgumentError, TermLostError } from '../../../src/store/errors.ts';
import { MYSQL_SQL_MODE, sessionIsolation } from '../../../src/store/mysql/mysql-session.ts';
import { MysqlStore } from '../../../src/store/mysql/mysql-store.ts';
import { createBackend, MYSQL_TEST_URL, term, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';

type MysqlTarget = Extract<DatabaseTarget, { backend: 'mysql' }>;

/** A scratch database with the given CREATE DATABASE options (dropped by the returned function). */
async function scratchDatabase(options: string): Promise<{ target: MysqlTarget; drop(): Promise<void> }> {
  const base = parseDatabaseUrl(MYSQL_TEST_URL, 'APSUP_TEST_MYSQL_URL') as MysqlTarget;
  const admin = await mysql.createConnection({ host: base.host, port: base.port, user: base.user, password: base.password, database: base.database });
  const database = `apsup_cs_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${database} ${options}`);
  return {
    target: { ...base, database },
    async drop() {
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${database}`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  if (backend === 'mysql')
    describe('[mysql] sessions: READ COMMITTED and the pinned sql_mode', () => {
      let fx: BackendFixture;
      let store: MysqlStore;
      before(async () => {
        fx = await createBackend('mysql');
        store = fx.store as MysqlStore;
      });
      after(async () => {
        await fx.cleanup();
      });

      test('every pool connection serves operations at READ COMMITTED, UTC and the pinned sql_mode', async () => {
        // Several transactions at once, so several physical connections are used.
        const sessions = await Promise.all(
          Array.from({ length: 4 }, () =>
            store.transaction(async (tx) => {
              const conn = tx as mysql.PoolConnection;
              const [rows] = await conn.query('SELECT CONNECTION_ID() AS id, @@SESSION.sql_mode AS mode, @@SESSION.time_zone AS tz');
              const row = (rows as Array<Record<string, unknown>>)[0];
              await new Promise((r) => setImmediate(r));
              return { id: Number(row.id), isolation: await sessionIsolation(conn), mode: String(row.mode), tz: String(row.tz) };
            }),
          ),
        );
        assert.ok(new Set(sessions.map((s) => s.id)).size >= 2, 'more than one physical connection was used');
        for (const s of sessions) assert.deepEqual([s.isolation, s.mode, s.tz], ['READ-COMMITTED', MYSQL_SQL_MODE, '+00:00']);
      });

      test('every pool connection carries the transaction bound (MariaDB: idle_transaction_timeout, whole seconds; one lease TTL by default)', async () => {
        const t = fx.target as MysqlTarget;
        const bounded = MysqlStore.open({ host: t.host, port: t.port, user: t.user, password: t.password, database: t.database }, 2, {
          transactionBoundMs: 2500,
        });
        try {
          const seconds = await Promise.all(
            [store, bounded].map((s) =>
              s.transaction(async (tx) => {
                const [rows] = await (tx as mysql.PoolConnection).query('SELECT @@SESSION.idle_transaction_timeout AS t');
                return Number((rows as Array<{ t: unknown }>)[0].t);
              }),
            ),
          );
          assert.deepEqual(seconds, [Math.ceil(store.transactionBoundMs / 1000), 3]);
          assert.throws(
            () => MysqlStore.open({ host: t.host, port: t.port, user: t.user, password: t.password, database: t.database }, 1, { transactionBoundMs: 500 }),
            /transaction bound/,
          );
        } finally {
          await bounded.close();
        }
      });

      test('every procedure was created with the pinned sql_mode (the migration connection pins it too)', async () => {
        const rows = await fx.query(
          "SELECT ROUTINE_NAME AS name, SQL_MODE AS mode FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME LIKE 'pc\\_%'",
        );
        assert.ok(rows.length > 20);
        assert.deepEqual(
          rows.filter((r) => r.mode !== MYSQL_SQL_MODE).map((r) => `${String(r.name)}: ${String(r.mode)}`),
          [],
        );
      });

      test('a caller connection at REPEATABLE READ, or with NO_BACKSLASH_ESCAPES, is refused with a clear error and nothing is written; once fixed it is accepted', async () => {
        const { host, port, user, password, database } = fx.target as MysqlTarget;
        const conn = await mysql.createConnection({ host, port, user, password, database, dateStrings: true, timezone: 'Z', charset: 'utf8mb4' });
        try {
          await conn.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
          await conn.query('START TRANSACTION');
          await assert.rejects(store.markDirty('caller-conn', 'k', conn), (e: unknown) => {
            assert.ok(e instanceof InvalidArgumentError, String(e));
            assert.match(e.message, /REPEATABLE-READ; the stored logic needs READ COMMITTED/);
            return true;
          });
          await conn.query('ROLLBACK');
          assert.equal(await store.readIntent('caller-conn', 'k'), null, 'nothing was written');

          await conn.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED');
          await conn.query("SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES'");
          await conn.query('START TRANSACTION');
          await assert.rejects(
            store.markDirty('caller-conn', "o'k\\x", conn),
            (e: unknown) => e instanceof InvalidArgumentError && /NO_BACKSLASH_ESCAPES/.test(e.message),
          );
          await conn.query('ROLLBACK');

          await conn.query(`SET SESSION sql_mode = '${MYSQL_SQL_MODE}'`);
          await conn.query('START TRANSACTION');
          const marked = await store.markDirty('caller-conn', "o'k\\x", conn);
          await conn.query('COMMIT');
          assert.equal(marked.dirtyGeneration, 1);
          assert.equal((await store.readIntent('caller-conn', "o'k\\x"))?.dirtyGeneration, 1, 'a scope id with a quote and a backslash round-trips');
          const stored = await fx.query('SELECT scope_id FROM pc_artifact_processing_intents WHERE binding_name = ?', ['caller-conn']);
          assert.deepEqual(
            stored.map((r) => r.scope_id),
            ["o'k\\x"],
          );
        } finally {
          await conn.end();
        }
      });
    });

  if (backend === 'mysql')
    describe('[mysql] the database default character set', () => {
      test('a database whose default character set is not utf8mb4 is refused by migrate up before any migration runs', async () => {
        const db = await scratchDatabase('CHARACTER SET latin1');
        try {
          await assert.rejects(
            migrateTarget(db.target),
            (e: unknown) =>
              e instanceof MigrationDriftError && /requires the database default character set utf8mb4/.test(e.message) && /has latin1/.test(e.message),
          );
          const conn = await mysql.createConnection({ ...db.target });
          try {
            const [tables] = await conn.query('SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()');
            assert.equal(Number((tables as Array<{ n: unknown }>)[0].n), 0, 'nothing was created, not even the ledger');
          } finally {
            await conn.end();
          }
        } finally {
          await db.drop();
        }
      });

      test('in a database created with the server default collation, keys and holder ids compare exactly', async () => {
        const db = await scratchDatabase('CHARACTER SET utf8mb4');
        const { host, port, user, password, database } = db.target;
        let store: MysqlStore | undefined;
        try {
          await migrateTarget(db.target);
          store = MysqlStore.open({ host, port, user, password, database }, 2);
          for (const id of ['Ключ-5', 'ключ-5', 'KEY', 'key', "o'k\\x"]) await store.markDirty('cs', id);
          assert.equal((await store.markDirty('cs', 'ключ-5')).dirtyGeneration, 2, 'the same key again');
          assert.equal((await store.readIntent('cs', 'Ключ-5'))?.dirtyGeneration, 1, 'a key differing only in case is another key');
          assert.equal((await store.readIntent('cs', 'KEY'))?.dirtyGeneration, 1);

          const held = await store.acquireTerm('global', 'holder-a', 60_000);
          assert.equal(held.outcome, 'acquired');
          const other = await store.acquireTerm('global', 'Holder-A', 60_000);
          assert.equal(other.outcome, 'standby', 'a holder id differing only in case is another holder');
          const impostor = term('global', 'Holder-A', held.supervisorGeneration);
          await assert.rejects(
            store.transaction((tx) => store!.assertTerm(tx, impostor)),
            (e: unknown) => e instanceof TermLostError,
          );
          await assert.rejects(store.renewTerm(impostor, 60_000), (e: unknown) => e instanceof TermLostError);
          await assert.rejects(
            store.invalidateTerm('global', { holderId: 'Holder-A', supervisorGeneration: held.supervisorGeneration }),
            (e: unknown) => e instanceof TermLostError,
          );
          await store.transaction((tx) => store!.assertTerm(tx, term('global', 'holder-a', held.supervisorGeneration)));
        } finally {
          await store?.close();
          await db.drop();
        }
      });
    });
}
