/** Opens the store selected by a database target. */
import type { DatabaseTarget } from '../config/database-url.ts';
import { MysqlStore } from './mysql/mysql-store.ts';
import { SqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './types.ts';

export function openStore(target: DatabaseTarget): Store {
  if (target.backend === 'sqlite') return SqliteStore.open(target.file);
  const { host, port, user, password, database } = target;
  return MysqlStore.open({ host, port, user, password, database });
}
