/**
 * `artifact-processing-supervisor`: the package's main entry, the SDK (families and processors,
 * also `./sdk`) and the store entry points (also `./store`). Durable tasks: `./tasks`.
 */
export * from './sdk/index.ts';
export {
  AttemptLostError,
  DatabaseBusyError,
  InvalidArgumentError,
  openStore,
  parseDatabaseUrl,
  ScanStaleError,
  StoreError,
  type Backend,
  type DatabaseTarget,
  type IntentSnapshot,
  type KeyGenerations,
  type Store,
  type StoreErrorCode,
  type Term,
  type TxHandle,
} from './store/index.ts';
