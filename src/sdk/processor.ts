/**
 * Processor SDK: what a family's processor implements and what it receives. A processor runs in a
 * managed worker child process and reaches the database through exactly two paths (RFC 6):
 * `ctx.read`, a handle on which the database refuses writes, and `ctx.commit`, a short fenced
 * transaction that asserts the term first and can acknowledge the invocation (and confirm the
 * dirty snapshot as clean) in the same transaction. Returning normally without a persisted
 * acknowledgement is a protocol failure.
 */
import type { Logger } from '../logging.ts';
import type { ReadHandle } from '../store/read-handle.ts';
import type { Tx } from '../store/scoped-tx.ts';
import type { Backend, BindingState, IntentSnapshot } from '../store/types.ts';

export type { ReadHandle } from '../store/read-handle.ts';
export type { Tx } from '../store/scoped-tx.ts';

/** The execution context of RFC section 1. */
export interface ExecutionContext {
  bindingName: string;
  artifactFamily: string;
  claimedRequestGeneration: number;
  supervisorKey: string;
  holderId: string;
  supervisorGeneration: number;
  workerId: string;
}

/** The trusted background principal the processor wrapper restores for automatic processing. */
export interface BackgroundPrincipal {
  kind: 'background';
  id: string;
  family: string;
}

export interface CommitOptions<T = unknown> {
  /** Acknowledge the invocation (handled := claimedRequestGeneration) in this transaction. */
  acknowledge?: boolean;
  /**
   * Also confirm the dirty generation of the start snapshot as clean (no work left in it); a
   * function decides from the transaction's result (e.g. whether the window reached the end).
   */
  confirmClean?: boolean | ((result: T) => boolean);
}

export interface ProcessorContext extends ExecutionContext {
  backend: Backend;
  /** Intent generations read when the invocation started. */
  snapshot: IntentSnapshot;
  /** Reads of the processor's own data; the database refuses writes (ReadOnlyError). */
  read: ReadHandle;
  /** The binding's schedule state (pc_aps_read_binding_state), e.g. the checkpoint of a cron fire. */
  readBindingState(): Promise<BindingState>;
  logger: Logger;
  principal: BackgroundPrincipal;
  /** Aborted when the worker is being terminated (timeout, shutdown, lost term). */
  signal: AbortSignal;
  /**
   * Runs fn in one fenced transaction (term asserted first, TermLostError when it is not live);
   * see CommitOptions. `tx` is valid only until fn settles; it refuses transaction control and
   * writes to the supervisor's tables (ReadOnlyError) and any use afterwards (TransactionClosedError).
   */
  commit<T>(fn: (tx: Tx) => Promise<T> | T, options?: CommitOptions<T>): Promise<T>;
  /**
   * Acknowledges without business writes (a NOOP, or a candidate awaiting review that an earlier
   * `commit` already stored). Under the supervisor the acknowledgement is committed by the
   * supervisor once processScope returns normally, fenced by this invocation's term and batched
   * with other workers' acknowledgements; a processor that throws afterwards leaves the request
   * owed (it is retried). Use `commit(fn, { acknowledge: true })` to acknowledge in the same
   * transaction as business writes.
   */
  acknowledge(options?: { confirmClean?: boolean }): Promise<void>;
  /** Runs one statement with bound parameters on the commit's handle (the same as `tx.query`). */
  query(tx: Tx, sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
}

export interface Processor {
  processScope(scopeId: string, ctx: ProcessorContext): Promise<void>;
}

/** Throw to report a progress or head CAS conflict: re-dispatched after a short fixed delay, not counted as a failure. */
export class ConflictError extends Error {
  constructor(message = 'progress conflict') {
    super(message);
    this.name = 'ConflictError';
  }
}

/** Throw when the trusted principal may not process this scope: a failure of this scope only. */
export class AuthorizationError extends Error {
  constructor(message = 'not authorized') {
    super(message);
    this.name = 'AuthorizationError';
  }
}

export function defineProcessor(processor: Processor): Processor {
  if (!processor || typeof processor.processScope !== 'function') throw new Error('a processor must have processScope(scopeId, ctx)');
  return processor;
}
