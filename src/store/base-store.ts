/**
 * Backend-independent half of a store: validates arguments, calls the named operation through
 * the backend's `call`, and maps rows. It decides nothing the SQL decides.
 */
import { InvalidArgumentError } from './errors.ts';
import { assertBindingName, assertGeneration, assertHolderId, assertPageLimit, assertScopeId, assertSupervisorKey } from './identifiers.ts';
import { intentBatchParams, toIntentBatch, type IntentBatchOperation } from './intake-batch.ts';
import { ackBatchParams, readIntentsParams, toAckBatch, toIntentList } from './key-lists.ts';
import { OPERATIONS, type OperationName } from './operations.ts';
import { ackParams, assertMode, assertTtl, keyParams, schedulePolicyParams, termParams, type Params } from './params.ts';
import {
  single,
  toAckResult,
  toAdmittedPage,
  toBindingState,
  toFamilyBacklog,
  toIntent,
  toKeyPage,
  toLeaseRead,
  toMaintenanceChange,
  toModeSwitch,
  toRuntimeModeClaim,
  toRuntimeModeState,
  toScanFinish,
  toScanStart,
  toTermResult,
  type Row,
} from './rows.ts';
import type { TransactionObserver } from './transaction-observer.ts';
import type {
  AckRequest,
  AckResult,
  Backend,
  BindingState,
  FamilyBacklog,
  IntentSnapshot,
  KeyPage,
  LeaseRead,
  MaintenanceChange,
  ModeSwitchResult,
  RuntimeMode,
  RuntimeModeClaim,
  RuntimeModeState,
  ScanFinish,
  ScanStart,
  SchedulePolicy,
  Store,
  Term,
  TermResult,
  TxHandle,
} from './types.ts';

/** Default and largest cap of the status counts (pc_aps_read_family_backlog). */
export const BACKLOG_COUNT_CAP = 1_000_000;

export abstract class BaseStore implements Store {
  abstract readonly backend: Backend;
  /**
   * Told when a transaction of this store opens and ends (a child process reports its commits to
   * the host, which ends one past its budget: transaction-observer.ts). The connection id is the
   * MySQL session's; null on SQLite.
   */
  onTransaction: TransactionObserver | null = null;

  /** Runs one operation and returns its result sets in order. */
  protected abstract call(op: OperationName, params: Params, tx?: TxHandle): Promise<Row[][]>;

  /** Runs any catalogue operation by name (used by the durable task adapter). */
  callOperation(op: OperationName, params: Params, tx?: TxHandle): Promise<Row[][]> {
    return this.call(op, params, tx);
  }

  /** Runs one operation whose result is a single result set (absent for pc_aps_assert_term). */
  private async rows(op: OperationName, params: Params, tx?: TxHandle): Promise<Row[]> {
    const sets = await this.call(op, params, tx);
    return sets.length === 0 ? [] : sets[sets.length - 1];
  }
  abstract domainQuery(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  abstract transaction<T>(fn: (tx: TxHandle) => Promise<T> | T): Promise<T>;
  /** The validated parameters of pc_aps_begin_fenced (for the adapters' fencedTransaction). */
  protected beginFencedParams(term: Term): Params {
    return termParams('pc_aps_begin_fenced', term);
  }

  /** A write transaction opened by pc_aps_begin_fenced: the term is asserted before fn runs, the lock held until commit. */
  abstract fencedTransaction<T>(term: Term, fn: (tx: TxHandle) => Promise<T> | T): Promise<T>;
  abstract close(): Promise<void>;

  protected checkTxUse(op: OperationName, tx: TxHandle | undefined): void {
    if (tx && (OPERATIONS[op].transaction === 'own' || OPERATIONS[op].transaction === 'opens')) {
      throw new InvalidArgumentError(op, "this operation owns its transaction and cannot run inside the caller's");
    }
  }

  async acquireTerm(supervisorKey: string, holderId: string, ttlMs: number): Promise<TermResult> {
    const op = 'pc_aps_acquire_term';
    assertSupervisorKey(op, supervisorKey);
    assertHolderId(op, holderId);
    assertTtl(op, ttlMs);
    const rows = await this.rows(op, { supervisor_key: supervisorKey, holder_id: holderId, ttl_ms: ttlMs });
    return toTermResult(single(rows, op));
  }

  async renewTerm(term: Term, ttlMs: number): Promise<TermResult> {
    const op = 'pc_aps_renew_term';
    const params = termParams(op, term);
    assertTtl(op, ttlMs);
    const rows = await this.rows(op, { ...params, ttl_ms: ttlMs });
    return toTermResult(single(rows, op));
  }

  async invalidateTerm(supervisorKey: string, expected?: { holderId: string; supervisorGeneration: number }): Promise<TermResult> {
    const op = 'pc_aps_invalidate_term';
    assertSupervisorKey(op, supervisorKey);
    if (expected) {
      assertHolderId(op, expected.holderId);
      assertGeneration(op, 'expected generation', expected.supervisorGeneration, 0);
    }
    const rows = await this.rows(op, {
      supervisor_key: supervisorKey,
      expected_holder_id: expected?.holderId ?? null,
      expected_generation: expected?.supervisorGeneration ?? null,
    });
    return toTermResult(single(rows, op));
  }

  async readLease(supervisorKey: string): Promise<LeaseRead> {
    const op = 'pc_aps_read_lease';
    assertSupervisorKey(op, supervisorKey);
    return toLeaseRead(single(await this.rows(op, { supervisor_key: supervisorKey }), op));
  }

  async assertTerm(tx: TxHandle, term: Term): Promise<void> {
    const op = 'pc_aps_assert_term';
    if (!tx) throw new InvalidArgumentError(op, "needs the caller's transaction handle");
    await this.rows(op, termParams(op, term), tx);
  }

  async markDirty(bindingName: string, scopeId: string, tx?: TxHandle): Promise<IntentSnapshot> {
    const op = 'pc_aps_mark_dirty';
    return toIntent(single(await this.rows(op, keyParams(op, bindingName, scopeId), tx), op));
  }

  async acceptRequest(bindingName: string, scopeId: string, tx?: TxHandle): Promise<IntentSnapshot> {
    const op = 'pc_aps_accept_request';
    return toIntent(single(await this.rows(op, keyParams(op, bindingName, scopeId), tx), op));
  }

  async markDirtyBatch(bindingName: string, scopeIds: readonly string[], tx?: TxHandle): Promise<IntentSnapshot[]> {
    return this.intentBatch('pc_aps_mark_dirty_batch', bindingName, scopeIds, tx);
  }

  async acceptRequestBatch(bindingName: string, scopeIds: readonly string[], tx?: TxHandle): Promise<IntentSnapshot[]> {
    return this.intentBatch('pc_aps_accept_request_batch', bindingName, scopeIds, tx);
  }

  private async intentBatch(op: IntentBatchOperation, bindingName: string, scopeIds: readonly string[], tx?: TxHandle): Promise<IntentSnapshot[]> {
    return toIntentBatch(op, await this.rows(op, intentBatchParams(op, bindingName, scopeIds), tx), bindingName, scopeIds);
  }

  async readIntent(bindingName: string, scopeId: string, tx?: TxHandle): Promise<IntentSnapshot | null> {
    const op = 'pc_aps_read_intent';
    const rows = await this.rows(op, keyParams(op, bindingName, scopeId), tx);
    return rows.length === 0 ? null : toIntent(single(rows, op));
  }

  async readIntents(bindingName: string, scopeIds: string[]): Promise<Array<IntentSnapshot | null>> {
    const op = 'pc_aps_read_intents';
    const params = readIntentsParams(op, bindingName, scopeIds);
    return toIntentList(op, single(await this.rows(op, params), op), bindingName, scopeIds);
  }

  async listOwedRequests(bindingName: string, afterSequence: number, limit: number): Promise<KeyPage> {
    const op = 'pc_aps_list_owed_requests';
    assertBindingName(op, bindingName);
    assertGeneration(op, 'after sequence', afterSequence, 0);
    assertPageLimit(op, limit);
    const rows = await this.rows(op, { binding_name: bindingName, after_sequence: afterSequence, page_limit: limit });
    return toKeyPage(rows, afterSequence, limit);
  }

  /** Keys with ordinary work (dirty > clean), a keyset page by pending sequence: what an operator looks at, never admission. */
  async listDirtyKeys(bindingName: string, afterSequence: number, limit: number): Promise<KeyPage> {
    const op = 'pc_aps_list_dirty_keys';
    assertBindingName(op, bindingName);
    assertGeneration(op, 'after sequence', afterSequence, 0);
    assertPageLimit(op, limit);
    return toKeyPage(await this.rows(op, { binding_name: bindingName, after_sequence: afterSequence, page_limit: limit }), afterSequence, limit);
  }

  async readBindingState(bindingName: string): Promise<BindingState> {
    const op = 'pc_aps_read_binding_state';
    assertBindingName(op, bindingName);
    return toBindingState(single(await this.rows(op, { binding_name: bindingName }), op));
  }

  async beginScan(term: Term, bindingName: string, policy: SchedulePolicy): Promise<ScanStart> {
    const op = 'pc_aps_begin_scan';
    const params = termParams(op, term);
    assertBindingName(op, bindingName);
    const rows = await this.rows(op, { ...params, binding_name: bindingName, ...schedulePolicyParams(op, policy) });
    return toScanStart(single(rows, op));
  }

  async admitScanPage(
    term: Term,
    bindingName: string,
    scanGeneration: number,
    afterSequence: number,
    limit: number,
    excludeScopeIds?: Iterable<string>,
  ): Promise<KeyPage> {
    const op = 'pc_aps_admit_scan_page';
    const params = termParams(op, term);
    assertBindingName(op, bindingName);
    assertGeneration(op, 'scan generation', scanGeneration, 1);
    assertGeneration(op, 'after sequence', afterSequence, 0);
    assertPageLimit(op, limit);
    const excluded: string[] = [];
    for (const scopeId of excludeScopeIds ?? []) {
      assertScopeId(op, scopeId);
      excluded.push(scopeId);
    }
    const sets = await this.call(op, {
      ...params,
      binding_name: bindingName,
      scan_generation: scanGeneration,
      after_sequence: afterSequence,
      page_limit: limit,
      exclude_scope_ids: excluded.length > 0 ? excluded.join(',') : null,
    });
    if (sets.length !== 2) throw new Error(`${op}: expected 2 result sets, got ${sets.length}`);
    return toAdmittedPage(single(sets[0], op), sets[1], afterSequence);
  }

  async finishScan(term: Term, bindingName: string, scanGeneration: number): Promise<ScanFinish> {
    const op = 'pc_aps_finish_scan';
    const params = termParams(op, term);
    assertBindingName(op, bindingName);
    assertGeneration(op, 'scan generation', scanGeneration, 1);
    const rows = await this.rows(op, { ...params, binding_name: bindingName, scan_generation: scanGeneration });
    return toScanFinish(single(rows, op));
  }

  async ackInvocation(term: Term, ack: AckRequest, tx?: TxHandle): Promise<AckResult> {
    const op = 'pc_aps_ack_invocation';
    return toAckResult(single(await this.rows(op, ackParams(op, term, ack), tx), op));
  }

  /** pc_aps_ack_invocation with the host's token of this invocation (a worker's own acknowledgement). */
  async ackInvocationWithToken(term: Term, ack: AckRequest, invocationToken: string, tx?: TxHandle): Promise<AckResult> {
    const op = 'pc_aps_ack_invocation_token';
    if (!/^[0-9a-f]{64}$/.test(invocationToken)) throw new InvalidArgumentError(op, 'the invocation token must be 64 hexadecimal characters');
    return toAckResult(single(await this.rows(op, { ...ackParams(op, term, ack), invocation_token: invocationToken }, tx), op));
  }

  /** The secret of the invocation tokens, recorded once (the first host's candidate). */
  async initInvocationSecret(candidate: string): Promise<string> {
    const op = 'pc_aps_init_invocation_secret';
    const row = single(await this.rows(op, { candidate }), op);
    return String(row.secret);
  }

  async acknowledge(term: Term, ack: AckRequest): Promise<AckResult> {
    const op = 'pc_aps_acknowledge';
    return toAckResult(single(await this.rows(op, ackParams(op, term, ack)), op));
  }

  async acknowledgeBatch(term: Term, bindingName: string, acks: AckRequest[]): Promise<AckResult[]> {
    const op = 'pc_aps_acknowledge_batch';
    const params = ackBatchParams(op, term, bindingName, acks);
    return toAckBatch(op, single(await this.rows(op, params), op), bindingName, acks);
  }

  async readRuntimeMode(): Promise<RuntimeModeState> {
    const op = 'pc_aps_read_runtime_mode';
    return toRuntimeModeState(single(await this.rows(op, {}), op));
  }

  async claimRuntimeMode(mode: RuntimeMode): Promise<RuntimeModeClaim> {
    const op = 'pc_aps_claim_runtime_mode';
    assertMode(op, mode);
    return toRuntimeModeClaim(single(await this.rows(op, { mode }), op), mode);
  }

  /** RFC 9: invalidates every key of the other mode that the database holds. */
  async switchMode(toMode: RuntimeMode): Promise<ModeSwitchResult> {
    const op = 'pc_aps_switch_mode';
    assertMode(op, toMode);
    const sets = await this.call(op, { to_mode: toMode });
    if (sets.length !== 2) throw new Error(`${op}: expected 2 result sets, got ${sets.length}`);
    return toModeSwitch(single(sets[0], op), sets[1], toMode);
  }

  async setMaintenance(on: boolean): Promise<MaintenanceChange> {
    const op = 'pc_aps_set_maintenance';
    return toMaintenanceChange(single(await this.rows(op, { maintenance: on ? 1 : 0 }), op));
  }

  async readFamilyBacklog(bindingName: string, countCap = BACKLOG_COUNT_CAP): Promise<FamilyBacklog> {
    const op = 'pc_aps_read_family_backlog';
    assertBindingName(op, bindingName);
    if (!Number.isSafeInteger(countCap) || countCap < 1 || countCap > BACKLOG_COUNT_CAP) {
      throw new InvalidArgumentError(op, `count cap must be an integer in 1..${BACKLOG_COUNT_CAP}, got ${String(countCap)}`);
    }
    return toFamilyBacklog(single(await this.rows(op, { binding_name: bindingName, count_cap: countCap }), op), bindingName, countCap);
  }
}
