/**
 * The durability setting printed next to each of our figures: SQLite PRAGMA synchronous as a
 * connection opened with the suite's setting reports it (the runtime's processes read the same
 * variable, test/store/sqlite-synchronous.test.ts), MariaDB/MySQL innodb_flush_log_at_trx_commit
 * and the binary log, read from the server.
 */
import type { BackendFixtureLike } from './fixture.ts';
import { openSqliteDatabase } from '../../src/store/sqlite/sqlite-store.ts';
import { parseSqliteSynchronous, type SqliteSynchronous } from '../../src/store/sqlite/synchronous.ts';

const NAMES = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];

/** The --sqlite-synchronous list (default NORMAL). */
export function parseSynchronousList(raw: string | undefined): SqliteSynchronous[] {
  if (raw === undefined) return ['NORMAL'];
  return [...new Set(raw.split(',').map((s) => parseSqliteSynchronous(s.trim() || 'invalid')))];
}

export async function ourDurability(fx: BackendFixtureLike, synchronous: SqliteSynchronous): Promise<string> {
  if (fx.backend === 'sqlite') {
    const file = (fx.db.target as { file: string }).file;
    const db = openSqliteDatabase(file, { synchronous });
    try {
      const level = Number(db.pragma('synchronous', { simple: true }));
      return `synchronous=${NAMES[level] ?? level} (WAL)`;
    } finally {
      db.close();
    }
  }
  const rows = await fx.exec('SELECT @@innodb_flush_log_at_trx_commit AS f, @@log_bin AS b, @@sync_binlog AS s');
  const r = rows[0] ?? {};
  return `innodb_flush_log_at_trx_commit=${r.f}, log_bin=${Number(r.b) ? `on, sync_binlog=${r.s}` : 'off'}`;
}
