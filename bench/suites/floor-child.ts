/**
 * One worker process of the `floor` suite: a plain connection (better-sqlite3 with the runtime's
 * pragmas, or one mysql2 connection with the runtime's session settings) running raw transaction
 * shapes without the supervisor:
 *   single  BEGIN; UPDATE one row by primary key; COMMIT
 *   fenced  BEGIN; SELECT one fence row FOR UPDATE (SQLite: inside BEGIN IMMEDIATE); UPDATE; COMMIT
 *   page    BEGIN; UPDATE 500 rows by primary key range (the statement is given); COMMIT, page after page
 *   inv     one dispatch round trip of the dispatch floor: the message arrives over the fork IPC
 *           channel (JSON, as the worker pool's), the process runs the fenced single-row commit
 *           (fenced: true) or nothing (fenced: false), and replies ack
 */
import mysql from 'mysql2/promise';
import { parseDatabaseUrl } from '../../src/config/database-url.ts';
import { openSqliteDatabase } from '../../src/store/sqlite/sqlite-store.ts';
import { MYSQL_SESSION_SETUP, mysqlConnectionConfig } from '../../src/store/mysql/mysql-session.ts';

type Go =
  | { type: 'go'; shape: 'single' | 'fenced'; durationMs: number; row: number; slot: number }
  | { type: 'page'; from: number; to: number; size: number; sql: string }
  | { type: 'inv'; fenced: boolean; row: number; slot: number; n: number };

interface Runner {
  tx(statements: Array<[string, unknown[]]>): Promise<void>;
  close(): Promise<void>;
}

async function open(): Promise<Runner> {
  const target = parseDatabaseUrl(process.env.APSUP_BENCH_DATABASE_URL);
  if (target.backend === 'sqlite') {
    const db = openSqliteDatabase(target.file);
    const cache = new Map<string, ReturnType<typeof db.prepare>>();
    const begin = db.prepare('BEGIN IMMEDIATE');
    const commit = db.prepare('COMMIT');
    return {
      async tx(statements) {
        begin.run();
        for (const [sql, params] of statements) {
          let stmt = cache.get(sql);
          if (!stmt) {
            stmt = db.prepare(sql);
            cache.set(sql, stmt);
          }
          if (stmt.reader) stmt.all(params);
          else stmt.run(params);
        }
        commit.run();
      },
      async close() {
        db.close();
      },
    };
  }
  const conn = await mysql.createConnection(mysqlConnectionConfig(target));
  for (const sql of MYSQL_SESSION_SETUP) await conn.query(sql);
  return {
    async tx(statements) {
      await conn.query('START TRANSACTION');
      for (const [sql, params] of statements) await conn.query(sql, params);
      await conn.query('COMMIT');
    },
    async close() {
      await conn.end();
    },
  };
}

const runner = await open();
const forUpdate = parseDatabaseUrl(process.env.APSUP_BENCH_DATABASE_URL).backend === 'sqlite' ? '' : ' FOR UPDATE';
const fencedCommit = (row: number, slot: number): Array<[string, unknown[]]> => [
  [`SELECT holder_id, generation FROM bench_floor_fence WHERE slot = ?${forUpdate}`, [slot]],
  ['UPDATE bench_floor_rows SET v = v + 1 WHERE id = ?', [row]],
];
process.on('message', async (m: Go | { type: 'exit' }) => {
  if (m.type === 'exit') {
    await runner.close();
    process.exit(0);
  }
  if (m.type === 'inv') {
    if (m.fenced) await runner.tx(fencedCommit(m.row, m.slot));
    process.send?.({ type: 'ack', n: m.n });
  } else if (m.type === 'go') {
    const [fence, update] = fencedCommit(m.row, m.slot);
    const statements = m.shape === 'fenced' ? [fence, update] : [update];
    let commits = 0;
    const deadline = performance.now() + m.durationMs;
    while (performance.now() < deadline) {
      await runner.tx(statements);
      commits += 1;
    }
    process.send?.({ type: 'done', commits });
  } else if (m.type === 'page') {
    const started = performance.now();
    let rows = 0;
    for (let from = m.from; from <= m.to; from += m.size) {
      const to = Math.min(m.to, from + m.size - 1);
      await runner.tx([[m.sql, [from, to]]]);
      rows += to - from + 1;
    }
    process.send?.({ type: 'done', rows, seconds: (performance.now() - started) / 1000 });
  }
});
process.send?.({ type: 'ready' });
