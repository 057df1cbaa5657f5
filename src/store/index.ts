/**
 * `artifact-processing-supervisor/store`: the store of one database (SQLite file or
 * MySQL/OceanBase) for host code: accepting intents (acceptRequest, markDirty) inside the
 * application's own transaction, and the typed errors the operations raise.
 */
export { openStore } from './open.ts';
export { parseDatabaseUrl, type DatabaseTarget } from '../config/database-url.ts';
export {
  AttemptLostError,
  DatabaseBusyError,
  InvalidArgumentError,
  ReadOnlyError,
  ScanStaleError,
  StoreError,
  TermLostError,
  TransactionClosedError,
  type StoreErrorCode,
} from './errors.ts';
export type { Backend, IntentSnapshot, KeyGenerations, Store, Term, TxHandle } from './types.ts';
