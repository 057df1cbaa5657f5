/** Opens the store selected by a database target. */
import fs from 'node:fs';
import { ConfigError, DATABASE_URL_VARIABLE, redactDatabaseUrl, type DatabaseTarget } from '../config/database-url.ts';
import { LEASE_TTL_VARIABLE } from './mysql/transaction-bound.ts';
import { MysqlStore, type MysqlStoreOptions } from './mysql/mysql-store.ts';
import { hostLockWait } from './sqlite/lock-wait.ts';
import { SqliteStore } from './sqlite/sqlite-store.ts';
import { SQLITE_SYNCHRONOUS_VARIABLE, type SqliteSynchronous } from './sqlite/synchronous.ts';
import type { Store } from './types.ts';

/** A command's store (`apsup trigger`, `tasks submit`, ...): on SQLite its commits wake a host's commit watch at once. */
export function openStore(target: DatabaseTarget): Store {
  return target.backend === 'sqlite' ? SqliteStore.open(target.file, { announceCommits: true }) : openMysql(target);
}

function openMysql(target: Extract<DatabaseTarget, { backend: 'mysql' }>, options?: MysqlStoreOptions): MysqlStore {
  const { host, port, user, password, database } = target;
  return MysqlStore.open({ host, port, user, password, database }, undefined, options);
}

/** A host's store settings from its parsed configuration (without them, each store reads this process's environment). */
export interface HostStoreSettings {
  sqliteSynchronous: SqliteSynchronous;
  /** How long a transaction may stay open and idle on a MySQL server: one lease TTL (transaction-bound.ts). */
  transactionBoundMs: number;
}

/**
 * The store of a host process (`apsup run`, `apsup tasks worker`): on SQLite its event loop never
 * waits for the write lock (an asynchronous, bounded wait: lock-wait.ts); MySQL statements never
 * block the event loop.
 */
export function openHostStore(target: DatabaseTarget, settings?: HostStoreSettings): Store {
  if (target.backend === 'sqlite') {
    const lockWait = settings ? hostLockWait(settings.transactionBoundMs) : undefined; // one commit budget (lock-wait.ts)
    return SqliteStore.openHost(target.file, lockWait, settings?.sqliteSynchronous);
  }
  return openMysql(target, { transactionBoundMs: settings?.transactionBoundMs });
}

/** The same settings for a worker process, whose store reads them from its environment (synchronous.ts, transaction-bound.ts). */
export function hostStoreEnv(settings: HostStoreSettings): Record<string, string> {
  return { [SQLITE_SYNCHRONOUS_VARIABLE]: settings.sqliteSynchronous, [LEASE_TTL_VARIABLE]: String(settings.transactionBoundMs / 1000) };
}

/** A SQLite database file that does not exist (a read-only command never creates one). */
export class DatabaseMissingError extends ConfigError {
  constructor(target: DatabaseTarget) {
    super(`the database ${redactDatabaseUrl(target)} does not exist (${DATABASE_URL_VARIABLE}); check the path, or create it with apsup migrate up`);
    this.name = 'DatabaseMissingError';
  }
}

/**
 * Read-only commands call this before opening: opening a SQLite file creates it (and its
 * directory), so a mistyped path would leave an empty database behind. MySQL reports an unknown
 * database itself.
 */
export function requireExistingDatabase(target: DatabaseTarget): void {
  if (target.backend === 'sqlite' && target.file !== ':memory:' && !fs.existsSync(target.file)) throw new DatabaseMissingError(target);
}
