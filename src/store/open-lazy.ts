/**
 * Opens the store of a database target loading only that backend's driver (worker children:
 * mysql2 is not loaded on SQLite and better-sqlite3 not on MySQL, which shortens a cold worker
 * start). The supervisor uses open.ts.
 */
import type { DatabaseTarget } from '../config/database-url.ts';
import type { Store } from './types.ts';

export async function openStoreLazily(target: DatabaseTarget): Promise<Store> {
  if (target.backend === 'sqlite') {
    const { SqliteStore } = await import('./sqlite/sqlite-store.ts');
    return SqliteStore.open(target.file);
  }
  const { MysqlStore } = await import('./mysql/mysql-store.ts');
  const { host, port, user, password, database } = target;
  return MysqlStore.open({ host, port, user, password, database });
}
