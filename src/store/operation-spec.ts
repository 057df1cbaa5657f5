/**
 * The shape of an entry of the operation catalogue (operations.ts: one name per operation, the same
 * on both backends).
 * `params` is the positional parameter order of the stored procedure (p_<name>) and the set of
 * named parameters (:<name>) of the SQLite script. `transaction` says who owns the transaction:
 *   own     the procedure/script starts and commits its own transaction; never inside a caller's
 *   caller  runs inside the caller's transaction; called alone, the adapter opens one around it
 *   read    a plain read; inside a caller's transaction it reads that transaction's view
 *   opens   starts the caller's transaction and leaves it open (Store.fencedTransaction); on
 *           SQLite the adapter's BEGIN IMMEDIATE comes first and the script runs inside it
 * The entries are in supervisor-operations.ts and task-operations.ts.
 */
export type TransactionMode = 'own' | 'caller' | 'read' | 'opens';

export interface OperationSpec {
  params: readonly string[];
  transaction: TransactionMode;
  summary: string;
  /**
   * 'adoption': a conversion of `apsup migrate adopt` that reads tables existing only in a
   * database being adopted; its MySQL procedure is installed by the adoption plan right before it
   * runs (not by a `-- @procedure` line of the main chain) and dropped afterwards.
   */
  installedBy?: 'adoption';
  /**
   * Internal procedures only: sql/sqlite/<name>.sql holds the same body as a script that the
   * operations' scripts `-- @include` (never run on its own).
   */
  sqliteInclude?: true;
}

/** The term's three parameters, first in every fenced operation's list. */
export const TERM = ['supervisor_key', 'holder_id', 'supervisor_generation'] as const;
