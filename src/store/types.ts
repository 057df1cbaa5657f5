/**
 * The operation catalogue of the supervisor's stored logic, as TypeScript sees it. Each method
 * calls exactly one operation of the same name: a stored procedure procedures/oceanbase/<op>.sql
 * on MySQL/OceanBase, a BEGIN IMMEDIATE script sql/sqlite/<op>.sql on SQLite.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Connection, PoolConnection } from 'mysql2/promise';

export type Backend = 'sqlite' | 'mysql';

/** The fencing token: (supervisor_key, holder_id, supervisor_generation). */
export interface Term {
  supervisorKey: string;
  holderId: string;
  supervisorGeneration: number;
}

export interface LeaseState {
  supervisorKey: string;
  holderId: string | null;
  supervisorGeneration: number;
  expiresAt: Date | null;
  dbNow: Date;
}

export interface TermResult extends LeaseState {
  outcome: 'acquired' | 'renewed' | 'standby' | 'invalidated';
}

export interface LeaseRead extends LeaseState {
  live: boolean;
}

export interface IntentSnapshot {
  bindingName: string;
  scopeId: string;
  pendingSequence: number;
  dirtyGeneration: number;
  cleanGeneration: number;
  requestedGeneration: number;
  handledGeneration: number;
  lastAutoScanGeneration: number;
}

/** One key of a discovery or admission page. */
export interface KeyGenerations {
  scopeId: string;
  pendingSequence: number;
  requestedGeneration: number;
  handledGeneration: number;
  dirtyGeneration: number;
  cleanGeneration: number;
}

export interface KeyPage {
  keys: KeyGenerations[];
  /** Cursor for the next page: the largest pending_sequence returned (or the input cursor). */
  nextAfterSequence: number;
  /** True when the page was short: nothing more in range. */
  exhausted: boolean;
}

export interface BindingState {
  bindingName: string;
  lastScheduleCheckpointAt: Date | null;
  scanGeneration: number;
  scanInProgress: boolean;
  scanUpperPendingSequence: number | null;
  scanStartedAt: Date | null;
  scanFinishedAt: Date | null;
  dbNow: Date;
}

export type SchedulePolicy = { kind: 'interval'; intervalSeconds: number } | { kind: 'cron'; fireAt: Date } | { kind: 'off' };

export interface ScanStart {
  bindingName: string;
  outcome: 'started' | 'resumed' | 'not_due';
  scanGeneration: number;
  scanUpperPendingSequence: number | null;
  scanInProgress: boolean;
  lastScheduleCheckpointAt: Date | null;
  nextDueAt: Date | null;
  dbNow: Date;
}

export interface ScanFinish {
  bindingName: string;
  outcome: 'finished' | 'already_finished';
  scanGeneration: number;
  lastScheduleCheckpointAt: Date | null;
  dbNow: Date;
}

export interface AckRequest {
  bindingName: string;
  scopeId: string;
  /** The requested generation read when the invocation started. */
  claimedRequestGeneration: number;
  /** The dirty generation of the snapshot read at start, when the processor found no remaining work in it. */
  cleanThroughDirtyGeneration?: number | null;
}

export interface AckResult {
  bindingName: string;
  scopeId: string;
  outcome: 'acknowledged' | 'already_handled';
  requestedGeneration: number;
  handledGeneration: number;
  dirtyGeneration: number;
  cleanGeneration: number;
}

/** The supervisor mode a database records (RFC 8, 9): NULL before the first runtime start. */
export type RuntimeMode = 'global' | 'dedicated';

export interface RuntimeModeState {
  mode: RuntimeMode | null;
  /**
   * True during a maintenance window (`apsup maintenance on`, a mode switch): dirty marks,
   * explicit requests and runtime starts are refused with 'maintenance'.
   */
  maintenance: boolean;
  dbNow: Date;
}

export interface RuntimeModeClaim extends RuntimeModeState {
  mode: RuntimeMode;
  /** 'recorded': the first start recorded its mode; 'matched': the recorded mode is the same. */
  outcome: 'recorded' | 'matched';
}

export interface MaintenanceChange extends RuntimeModeState {
  /** False when the flag already had the requested value. */
  changed: boolean;
}

export interface ModeSwitchResult {
  mode: RuntimeMode;
  /** The old mode's keys that had a row, after invalidation (holder NULL, generation advanced). */
  invalidated: TermResult[];
  dbNow: Date;
}

export interface FamilyBacklog {
  bindingName: string;
  /** Keys with requested > handled, at most countCap. */
  owedCount: number;
  /** Keys with dirty > clean, at most countCap. */
  backlogCount: number;
  countCap: number;
  dbNow: Date;
}

/** The caller's own transaction handle: a better-sqlite3 Database inside BEGIN IMMEDIATE, or a mysql2 connection inside START TRANSACTION. */
export type TxHandle = BetterSqlite3.Database | Connection | PoolConnection;

export type TxRow = Record<string, unknown>;

/** A statement runner bound to one open fenced transaction (scoped-tx.ts). */
export interface Tx {
  readonly backend: Backend;
  query(sql: string, params?: unknown[]): Promise<TxRow[]>;
}

export interface Store {
  readonly backend: Backend;

  // Terms (1, 2)
  acquireTerm(supervisorKey: string, holderId: string, ttlMs: number): Promise<TermResult>;
  renewTerm(term: Term, ttlMs: number): Promise<TermResult>;
  invalidateTerm(supervisorKey: string, expected?: { holderId: string; supervisorGeneration: number }): Promise<TermResult>;
  readLease(supervisorKey: string): Promise<LeaseRead>;
  /** Locks and validates the lease row inside the caller's transaction; throws TermLostError. */
  assertTerm(tx: TxHandle, term: Term): Promise<void>;

  // Intents (3, 7, 8)
  markDirty(bindingName: string, scopeId: string, tx?: TxHandle): Promise<IntentSnapshot>;
  acceptRequest(bindingName: string, scopeId: string, tx?: TxHandle): Promise<IntentSnapshot>;
  /**
   * Batched intake (pc_aps_mark_dirty_batch / pc_aps_accept_request_batch): up to 1000 keys of one
   * binding in one call, inside the caller's transaction like the single forms; results in input
   * order, each the intent after its own item (a repeated key is marked / requested twice).
   */
  markDirtyBatch(bindingName: string, scopeIds: readonly string[], tx?: TxHandle): Promise<IntentSnapshot[]>;
  acceptRequestBatch(bindingName: string, scopeIds: readonly string[], tx?: TxHandle): Promise<IntentSnapshot[]>;
  readIntent(bindingName: string, scopeId: string, tx?: TxHandle): Promise<IntentSnapshot | null>;
  listOwedRequests(bindingName: string, afterSequence: number, limit: number): Promise<KeyPage>;

  // Scans (4, 5, 6)
  readBindingState(bindingName: string): Promise<BindingState>;
  beginScan(term: Term, bindingName: string, policy: SchedulePolicy): Promise<ScanStart>;
  admitScanPage(
    term: Term,
    bindingName: string,
    scanGeneration: number,
    afterSequence: number,
    limit: number,
    excludeScopeIds?: Iterable<string>,
  ): Promise<KeyPage>;
  finishScan(term: Term, bindingName: string, scanGeneration: number): Promise<ScanFinish>;

  // Acknowledgement (9)
  ackInvocation(term: Term, ack: AckRequest, tx?: TxHandle): Promise<AckResult>;
  /** ackInvocation with the host's token of the invocation (pc_aps_ack_invocation_token): what a worker calls. */
  ackInvocationWithToken(term: Term, ack: AckRequest, invocationToken: string, tx?: TxHandle): Promise<AckResult>;
  /** The secret of the invocation tokens, recorded once by the first host (pc_aps_init_invocation_secret). */
  initInvocationSecret(candidate: string): Promise<string>;
  /** ackInvocation in its own transaction, one call (pc_aps_acknowledge): no business writes. */
  acknowledge(term: Term, ack: AckRequest): Promise<AckResult>;
  /**
   * Group commit (pc_aps_acknowledge_batch): acknowledgements without business writes of up to
   * 1000 keys of one binding in one transaction, fenced by one term check; results in input order.
   * All or nothing: any error (TermLostError included) rolls the whole batch back.
   */
  acknowledgeBatch(term: Term, bindingName: string, acks: AckRequest[]): Promise<AckResult[]>;
  /** pc_aps_read_intents: readIntent of up to 1000 keys of one binding in one call; null where a key was never registered. */
  readIntents(bindingName: string, scopeIds: string[]): Promise<Array<IntentSnapshot | null>>;

  // Recorded mode, mode switch and status
  readRuntimeMode(): Promise<RuntimeModeState>;
  /** A runtime start: records or matches the mode; throws StoreError 'mode_mismatch' or 'maintenance'. */
  claimRuntimeMode(mode: RuntimeMode): Promise<RuntimeModeClaim>;
  /** Invalidates the old mode's keys and records the new mode; throws StoreError 'live_candidate'. */
  /** Invalidates every term of the other mode the database holds (RFC 9) and records toMode. */
  switchMode(toMode: RuntimeMode): Promise<ModeSwitchResult>;
  /** Maintenance window on/off (pc_aps_set_maintenance). */
  setMaintenance(on: boolean): Promise<MaintenanceChange>;
  readFamilyBacklog(bindingName: string, countCap?: number): Promise<FamilyBacklog>;

  /**
   * One parameterized statement outside any transaction, for a processor's or provider's reads of
   * its own domain tables. Never used for the supervisor's own tables' writes.
   */
  domainQuery(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;

  /** Runs fn inside one write transaction (SQLite: BEGIN IMMEDIATE; MySQL: START TRANSACTION, READ COMMITTED). */
  transaction<T>(fn: (tx: TxHandle) => Promise<T> | T): Promise<T>;
  /**
   * A fenced business transaction (pc_aps_begin_fenced): opened with the term asserted (fence
   * lock held until the commit), then fn's writes, then COMMIT; TermLostError before fn runs when
   * the term is not live. On MySQL/OceanBase the opening and the check are one call.
   */
  fencedTransaction<T>(term: Term, fn: (tx: TxHandle) => Promise<T> | T): Promise<T>;
  close(): Promise<void>;
}

/** The read handle (read-handle.ts): a processor's or task handler's only way to the database besides its fenced commit. */
export type ReadRow = Record<string, unknown>;

export interface ReadOptions {
  /** Aborts the statement (the connection running it is discarded) and rejects with the reason. */
  signal?: AbortSignal;
}

export interface ReadHandle {
  readonly backend: Backend;
  /** One read statement with bound parameters; ReadOnlyError for anything that is not a read. */
  query(sql: string, params?: unknown[], options?: ReadOptions): Promise<ReadRow[]>;
  close(): Promise<void>;
}

export interface ReadHandleOptions {
  /** Upper bound of one statement on the server (MySQL/OceanBase; default 30 s). */
  statementTimeoutMs?: number;
  /** Connections of the MySQL read pool (default 2). */
  connectionLimit?: number;
  /**
   * SQLite: run reads in a reader process, so a slow read never blocks the caller's event loop
   * and a bound or an abort ends it at once (the host's handle; a worker process reads inline).
   */
  isolated?: boolean;
}
