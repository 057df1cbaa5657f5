// Model-based contract test: a seeded random sequence of intent, scan and acknowledgement
// operations runs against each backend next to a small in-memory model of the generations
// (RFC sections 3-5, the headers of procedures/oceanbase/*.sql and sql/sqlite/*.sql). Every
// operation's result is predicted by the model (outcomes, errors, which keys a scan page admits
// and with which requested generation), and after every step the database is compared with the
// model through readIntent / listOwedRequests / readBindingState.
//
// Reproduce a failure with APSUP_MODEL_SEEDS=<seed>[,<seed>...] (and APSUP_MODEL_STEPS=<n>);
// the seeds used are printed. By default one fixed seed and one fresh seed run per backend.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { StoreError } from '../../../src/store/errors.ts';
import type { BindingState, IntentSnapshot, KeyGenerations, KeyPage, SchedulePolicy, ScanStart, Store, Term } from '../../../src/store/types.ts';
import { createBackend } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';

const FIXED_SEED = 0x5eed_c0de;
const SEEDS: number[] = process.env.APSUP_MODEL_SEEDS
  ? process.env.APSUP_MODEL_SEEDS.split(',').map((s) => Number(s.trim()) >>> 0)
  : [FIXED_SEED, (Date.now() ^ (process.pid << 8)) >>> 0];
const STEPS = Number(process.env.APSUP_MODEL_STEPS ?? 600);

const BINDINGS = ['topic-memory', 'profile.v2'];
// Scope ids are opaque: case, spaces, prefixes of one another and non-ASCII text must all be
// distinct keys, and the comma-separated exclusion list must match them exactly.
const SCOPES = ['k1', 'k10', 'K1', 'k2', 'scope 3', 'scope-4', 'ключ-5', 'k6', 'a:b/7', 'x8', 'k', 'Z'];
/** Never registered by the sequence: acknowledging it must fail with intent_not_found. */
const GHOST_SCOPE = 'ghost-never-registered';
const SUPERVISOR_KEY = 'global';
const TTL_MS = 600_000;

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface KeyModel {
  binding: string;
  scopeId: string;
  seq: number;
  dirty: number;
  clean: number;
  requested: number;
  handled: number;
  lastAutoScan: number;
}

interface BindingModel {
  name: string;
  scanGeneration: number;
  inProgress: boolean;
  upper: number | null;
  /** last_schedule_checkpoint_at in ms, null when never checked. */
  checkpoint: number | null;
  everStarted: boolean;
}

/** The supervisor's in-memory scan position; lost on a crash or takeover. */
interface Cursor {
  generation: number;
  after: number;
  exhausted: boolean;
}

/** An invocation that read its snapshot and has not acknowledged yet. */
interface Invocation {
  id: number;
  binding: string;
  scopeId: string;
  claimed: number;
  snapshotDirty: number;
  term: Term;
}

class Rollback extends Error {
  constructor() {
    super('business transaction rolled back on purpose');
  }
}

type TxMode = 'direct' | 'tx' | 'tx-rollback';

class ModelRun {
  private readonly rng: () => number;
  private step = 0;
  private readonly trace: string[] = [];
  private readonly keys = new Map<string, KeyModel>();
  private readonly bindings = new Map<string, BindingModel>();
  private readonly cursors = new Map<string, Cursor | null>();
  private inflight: Invocation[] = [];
  private nextInvocationId = 1;
  private maxSeq = 0;
  private readonly seqOwner = new Map<number, string>();
  private term!: Term;
  private holderCounter = 0;
  readonly stats: Record<string, number> = {};

  constructor(
    private readonly backend: string,
    private readonly store: Store,
    private readonly seed: number,
  ) {
    this.rng = mulberry32(seed);
    for (const name of BINDINGS) {
      this.bindings.set(name, { name, scanGeneration: 0, inProgress: false, upper: null, checkpoint: null, everStarted: false });
      this.cursors.set(name, null);
    }
  }

  // ---------------------------------------------------------------- helpers

  private int(lo: number, hi: number): number {
    return lo + Math.floor(this.rng() * (hi - lo + 1));
  }

  private chance(p: number): boolean {
    return this.rng() < p;
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rng() * items.length)];
  }

  private count(what: string): void {
    this.stats[what] = (this.stats[what] ?? 0) + 1;
  }

  private log(line: string): void {
    this.trace.push(`#${this.step} ${line}`);
    if (this.trace.length > 40) this.trace.shift();
  }

  private fail(message: string): never {
    throw new Error(
      `[${this.backend}] model mismatch (seed=${this.seed}, step=${this.step}; reproduce with APSUP_MODEL_SEEDS=${this.seed}): ` +
        `${message}\nlast operations:\n  ${this.trace.join('\n  ')}`,
    );
  }

  private same(actual: unknown, expected: unknown, what: string): void {
    try {
      assert.deepStrictEqual(actual, expected);
    } catch {
      this.fail(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
    }
  }

  private async expectError(what: string, code: string, run: () => Promise<unknown>): Promise<void> {
    let result: unknown;
    try {
      result = await run();
    } catch (error) {
      if (!(error instanceof StoreError)) this.fail(`${what}: expected StoreError ${code}, got ${String(error)}`);
      if (error.code !== code) this.fail(`${what}: expected StoreError ${code}, got ${error.code}`);
      this.log(`${what} -> ${code} (as predicted)`);
      return;
    }
    this.fail(`${what}: expected StoreError ${code}, got success ${JSON.stringify(result)}`);
  }

  /** Runs fn directly, inside a committed transaction, or inside one that rolls back afterwards. */
  private async withMode<T>(mode: TxMode, fn: (tx?: unknown) => Promise<T>): Promise<T | undefined> {
    if (mode === 'direct') return fn();
    if (mode === 'tx') return this.store.transaction((tx) => fn(tx));
    try {
      await this.store.transaction(async (tx) => {
        await fn(tx);
        throw new Rollback();
      });
    } catch (error) {
      if (error instanceof Rollback) return undefined;
      throw error;
    }
    this.fail('a transaction that threw did not reject');
  }

  private txMode(): TxMode {
    const r = this.rng();
    return r < 0.6 ? 'direct' : r < 0.85 ? 'tx' : 'tx-rollback';
  }

  private id(binding: string, scopeId: string): string {
    return `${binding}\u0000${scopeId}`;
  }

  private key(binding: string, scopeId: string): KeyModel | undefined {
    return this.keys.get(this.id(binding, scopeId));
  }

  private keysOf(binding: string): KeyModel[] {
    return [...this.keys.values()].filter((k) => k.binding === binding).sort((a, b) => a.seq - b.seq);
  }

  private gens(k: KeyModel): KeyGenerations {
    return {
      scopeId: k.scopeId,
      pendingSequence: k.seq,
      requestedGeneration: k.requested,
      handledGeneration: k.handled,
      dirtyGeneration: k.dirty,
      cleanGeneration: k.clean,
    };
  }

  private snapshotOf(k: KeyModel): IntentSnapshot {
    return {
      bindingName: k.binding,
      scopeId: k.scopeId,
      pendingSequence: k.seq,
      dirtyGeneration: k.dirty,
      cleanGeneration: k.clean,
      requestedGeneration: k.requested,
      handledGeneration: k.handled,
      lastAutoScanGeneration: k.lastAutoScan,
    };
  }

  private checkInvariants(s: { dirtyGeneration: number; cleanGeneration: number; requestedGeneration: number; handledGeneration: number }, what: string): void {
    if (!(s.cleanGeneration >= 0 && s.cleanGeneration <= s.dirtyGeneration)) this.fail(`${what}: violates 0 <= clean <= dirty: ${JSON.stringify(s)}`);
    if (!(s.handledGeneration >= 0 && s.handledGeneration <= s.requestedGeneration))
      this.fail(`${what}: violates 0 <= handled <= requested: ${JSON.stringify(s)}`);
  }

  /** A key seen for the first time: its pending_sequence must be new, unique and above every earlier one. */
  private register(binding: string, scopeId: string, seq: number): KeyModel {
    const owner = this.seqOwner.get(seq);
    if (owner !== undefined) this.fail(`pending_sequence ${seq} of ${binding}/${scopeId} is already used by ${JSON.stringify(owner)}`);
    if (!(seq > this.maxSeq)) this.fail(`pending_sequence ${seq} of new key ${binding}/${scopeId} is not above the largest earlier one ${this.maxSeq}`);
    this.maxSeq = seq;
    this.seqOwner.set(seq, this.id(binding, scopeId));
    const k: KeyModel = { binding, scopeId, seq, dirty: 0, clean: 0, requested: 0, handled: 0, lastAutoScan: 0 };
    this.keys.set(this.id(binding, scopeId), k);
    return k;
  }

  // ---------------------------------------------------------------- checks

  private async checkKey(binding: string, scopeId: string): Promise<void> {
    const actual = await this.store.readIntent(binding, scopeId);
    const k = this.key(binding, scopeId);
    if (!k) {
      if (actual !== null) this.fail(`readIntent(${binding}, ${scopeId}): expected no row, got ${JSON.stringify(actual)}`);
      return;
    }
    if (actual === null) this.fail(`readIntent(${binding}, ${scopeId}): expected a row, got none`);
    this.checkInvariants(actual, `readIntent(${binding}, ${scopeId})`);
    this.same(actual, this.snapshotOf(k), `readIntent(${binding}, ${scopeId})`);
  }

  /** Pages through the owed keys of a binding with a random page size and compares every page. */
  private async checkOwed(binding: string): Promise<void> {
    const expected = this.keysOf(binding).filter((k) => k.requested > k.handled);
    const limit = this.pick([1, 2, 3, 5, 50]);
    let after = 0;
    let offset = 0;
    for (let page = 0; page < 40; page += 1) {
      const got = await this.store.listOwedRequests(binding, after, limit);
      const want = expected.slice(offset, offset + limit);
      this.same(
        got.keys,
        want.map((k) => this.gens(k)),
        `listOwedRequests(${binding}, after=${after}, limit=${limit}).keys`,
      );
      const wantNext = want.length > 0 ? want[want.length - 1].seq : after;
      this.same(got.nextAfterSequence, wantNext, `listOwedRequests(${binding}, after=${after}, limit=${limit}).nextAfterSequence`);
      this.same(got.exhausted, want.length < limit, `listOwedRequests(${binding}, after=${after}, limit=${limit}).exhausted`);
      if (got.exhausted) return;
      after = got.nextAfterSequence;
      offset += limit;
    }
    this.fail(`listOwedRequests(${binding}) did not end`);
  }

  private async checkBinding(binding: string): Promise<BindingState> {
    const m = this.bindings.get(binding)!;
    const state = await this.store.readBindingState(binding);
    this.same(
      {
        bindingName: state.bindingName,
        scanGeneration: state.scanGeneration,
        scanInProgress: state.scanInProgress,
        scanUpperPendingSequence: state.scanUpperPendingSequence,
        checkpoint: state.lastScheduleCheckpointAt?.getTime() ?? null,
        started: state.scanStartedAt !== null,
        finished: state.scanFinishedAt !== null,
      },
      {
        bindingName: binding,
        scanGeneration: m.scanGeneration,
        scanInProgress: m.inProgress,
        scanUpperPendingSequence: m.upper,
        checkpoint: m.checkpoint,
        started: m.everStarted,
        finished: m.everStarted && !m.inProgress,
      },
      `readBindingState(${binding})`,
    );
    return state;
  }

  async checkAll(): Promise<void> {
    for (const binding of BINDINGS) {
      for (const scopeId of SCOPES) await this.checkKey(binding, scopeId);
      await this.checkKey(binding, GHOST_SCOPE);
      await this.checkOwed(binding);
      await this.checkBinding(binding);
    }
  }

  // ---------------------------------------------------------------- operations

  async setup(): Promise<void> {
    await this.acquireNewTerm();
  }

  private async acquireNewTerm(): Promise<void> {
    this.holderCounter += 1;
    const holderId = `holder-${this.holderCounter}`;
    const previous = this.term?.supervisorGeneration ?? 0;
    if (this.term) {
      const invalidated = await this.store.invalidateTerm(SUPERVISOR_KEY, {
        holderId: this.term.holderId,
        supervisorGeneration: this.term.supervisorGeneration,
      });
      this.same([invalidated.outcome, invalidated.supervisorGeneration, invalidated.holderId], ['invalidated', previous + 1, null], 'invalidateTerm');
    }
    const acquired = await this.store.acquireTerm(SUPERVISOR_KEY, holderId, TTL_MS);
    const expectedGeneration = this.term ? previous + 2 : acquired.supervisorGeneration;
    this.same([acquired.outcome, acquired.holderId, acquired.supervisorGeneration], ['acquired', holderId, expectedGeneration], 'acquireTerm');
    this.term = { supervisorKey: SUPERVISOR_KEY, holderId, supervisorGeneration: acquired.supervisorGeneration };
    this.log(`term ${holderId}@${acquired.supervisorGeneration}`);
  }

  private async opMark(kind: 'dirty' | 'request'): Promise<void> {
    const binding = this.pick(BINDINGS);
    const scopeId = this.pick(SCOPES);
    const mode = this.txMode();
    const before = this.key(binding, scopeId);
    const call = (tx?: unknown) =>
      kind === 'dirty' ? this.store.markDirty(binding, scopeId, tx as never) : this.store.acceptRequest(binding, scopeId, tx as never);
    const result = await this.withMode(mode, call);
    this.log(`${kind === 'dirty' ? 'markDirty' : 'acceptRequest'}(${binding}, ${scopeId}) [${mode}]`);
    this.count(`${kind}:${mode}`);
    if (mode !== 'tx-rollback') {
      if (!result) this.fail('no result');
      const k = before ?? this.register(binding, scopeId, result.pendingSequence);
      if (kind === 'dirty') k.dirty += 1;
      else k.requested += 1;
      this.checkInvariants(result, 'mark result');
      this.same(result, this.snapshotOf(k), `${kind} result`);
    }
    await this.checkKey(binding, scopeId);
    await this.checkOwed(binding);
  }

  /** An invocation starts: it reads the snapshot it will acknowledge (sometimes inside a transaction). */
  private async opSnapshot(): Promise<void> {
    const binding = this.pick(BINDINGS);
    const scopeId = this.pick(SCOPES);
    const inTx = this.chance(0.3);
    const snap = inTx ? await this.store.transaction((tx) => this.store.readIntent(binding, scopeId, tx)) : await this.store.readIntent(binding, scopeId);
    const k = this.key(binding, scopeId);
    this.log(`snapshot(${binding}, ${scopeId})${inTx ? ' [tx]' : ''} -> ${snap ? `req=${snap.requestedGeneration} dirty=${snap.dirtyGeneration}` : 'none'}`);
    this.same(snap, k ? this.snapshotOf(k) : null, `readIntent(${binding}, ${scopeId})`);
    if (snap && snap.requestedGeneration >= 1) {
      this.inflight.push({
        id: this.nextInvocationId++,
        binding,
        scopeId,
        claimed: snap.requestedGeneration,
        snapshotDirty: snap.dirtyGeneration,
        term: { ...this.term },
      });
      this.count('snapshot');
      // Sometimes the invocation finishes at once, with nothing in between.
      if (this.chance(0.3)) await this.opAck(this.inflight.length - 1);
    }
  }

  /** Acknowledges an in-flight invocation (the newest, or an older one after other operations). */
  private async opAck(index?: number): Promise<void> {
    if (this.inflight.length === 0) return this.opSnapshot();
    const i = index ?? (this.chance(0.5) ? this.inflight.length - 1 : this.int(0, this.inflight.length - 1));
    const inv = this.inflight[i];
    this.inflight.splice(i, 1);
    const k = this.key(inv.binding, inv.scopeId)!;
    let claimed = inv.claimed;
    let variant = 'snapshot';
    if (k.handled >= 1 && this.chance(0.15)) {
      // A duplicate invocation of an already acknowledged generation.
      claimed = this.int(1, k.handled);
      variant = 'stale';
    }
    let clean = this.chance(0.5) ? inv.snapshotDirty : null;
    if (clean !== null && k.clean >= 1 && this.chance(0.3)) {
      // The snapshot of an older invocation: its dirty generation is below the current clean one.
      clean = this.int(0, k.clean - 1);
      variant += '+old-clean';
    }
    const mode = this.txMode();
    const what = `ack#${inv.id}(${inv.binding}, ${inv.scopeId}, claimed=${claimed}, clean=${clean}, term=${inv.term.holderId}@${inv.term.supervisorGeneration}) [${variant}, ${mode}]`;
    const ack = (tx?: unknown) =>
      this.store.ackInvocation(
        inv.term,
        {
          bindingName: inv.binding,
          scopeId: inv.scopeId,
          claimedRequestGeneration: claimed,
          cleanThroughDirtyGeneration: clean,
        },
        tx as never,
      );

    if (inv.term.supervisorGeneration !== this.term.supervisorGeneration) {
      // A worker of an earlier term is still alive: its acknowledgement is fenced out.
      this.count('ack:term_lost');
      await this.expectError(what, 'term_lost', () => this.withMode(mode === 'tx-rollback' ? 'tx' : mode, ack));
    } else {
      const result = await this.withMode(mode, ack);
      this.log(`${what} -> ${result ? `${result.outcome} handled=${result.handledGeneration} clean=${result.cleanGeneration}` : 'rolled back'}`);
      // Predicted: handled := max(handled, claimed); outcome already_handled when handled >= claimed.
      // clean := max(clean, snapshot dirty) when given (both backends also do this on already_handled).
      const outcome = k.handled >= claimed ? 'already_handled' : 'acknowledged';
      const after = { ...k, handled: Math.max(k.handled, claimed), clean: clean === null ? k.clean : Math.max(k.clean, clean) };
      this.count(`ack:${outcome}:${mode}`);
      if (mode !== 'tx-rollback') {
        if (!result) this.fail('no ack result');
        this.same(
          result,
          {
            bindingName: inv.binding,
            scopeId: inv.scopeId,
            outcome,
            requestedGeneration: after.requested,
            handledGeneration: after.handled,
            dirtyGeneration: after.dirty,
            cleanGeneration: after.clean,
          },
          what,
        );
        k.handled = after.handled;
        k.clean = after.clean;
      }
    }
    await this.checkKey(inv.binding, inv.scopeId);
    await this.checkOwed(inv.binding);
  }

  /** Acknowledgements the database must refuse, leaving everything unchanged. */
  private async opBadAck(): Promise<void> {
    const binding = this.pick(BINDINGS);
    const registered = SCOPES.filter((s) => this.key(binding, s));
    const r = this.rng();
    if (registered.length === 0 || r < 0.2) {
      this.count('bad-ack:intent_not_found');
      await this.expectError(`ack(${binding}, ${GHOST_SCOPE})`, 'intent_not_found', () =>
        this.store.ackInvocation(this.term, {
          bindingName: binding,
          scopeId: GHOST_SCOPE,
          claimedRequestGeneration: 1,
        }),
      );
      await this.checkKey(binding, GHOST_SCOPE);
      return;
    }
    const k = this.key(binding, this.pick(registered))!;
    if (r < 0.6 || k.requested === 0) {
      const claimed = k.requested + this.int(1, 3);
      this.count('bad-ack:ack_beyond_request');
      await this.expectError(`ack(${binding}, ${k.scopeId}, claimed=${claimed} > requested=${k.requested})`, 'ack_beyond_request', () =>
        this.store.ackInvocation(this.term, {
          bindingName: binding,
          scopeId: k.scopeId,
          claimedRequestGeneration: claimed,
          cleanThroughDirtyGeneration: k.dirty,
        }),
      );
    } else {
      const claimed = this.int(1, k.requested);
      const clean = k.dirty + this.int(1, 3);
      this.count('bad-ack:clean_beyond_dirty');
      await this.expectError(`ack(${binding}, ${k.scopeId}, claimed=${claimed}, clean=${clean} > dirty=${k.dirty})`, 'clean_beyond_dirty', () =>
        this.withMode(this.chance(0.5) ? 'tx' : 'direct', (tx) =>
          this.store.ackInvocation(
            this.term,
            {
              bindingName: binding,
              scopeId: k.scopeId,
              claimedRequestGeneration: claimed,
              cleanThroughDirtyGeneration: clean,
            },
            tx as never,
          ),
        ),
      );
    }
    await this.checkKey(binding, k.scopeId);
    await this.checkOwed(binding);
  }

  private predictStart(m: BindingModel, policy: SchedulePolicy, fireAt: number | null): 'started' | 'resumed' | 'not_due' {
    if (m.inProgress) return 'resumed';
    if (policy.kind === 'cron') return m.checkpoint === null || (fireAt as number) > m.checkpoint ? 'started' : 'not_due';
    if (policy.kind === 'interval') {
      // Only used with a one-hour interval, so a checked binding is never due again within the test.
      if (m.checkpoint === null) return this.keysOf(m.name).some((k) => k.dirty > k.clean) ? 'started' : 'not_due';
      return 'not_due';
    }
    return 'not_due';
  }

  private async begin(binding: string, policy: SchedulePolicy, stateBefore: BindingState): Promise<ScanStart> {
    const m = this.bindings.get(binding)!;
    const fireAt = policy.kind === 'cron' ? policy.fireAt.getTime() : null;
    const predicted = this.predictStart(m, policy, fireAt);
    const start = await this.store.beginScan(this.term, binding, policy);
    const policyText =
      policy.kind === 'cron' ? `cron@${policy.fireAt.toISOString()}` : policy.kind === 'interval' ? `interval ${policy.intervalSeconds}s` : 'off';
    this.log(`beginScan(${binding}, ${policyText}) -> ${start.outcome} gen=${start.scanGeneration} upper=${start.scanUpperPendingSequence}`);
    this.count(`begin:${policy.kind}:${predicted}`);
    if (predicted === 'started') {
      m.scanGeneration += 1;
      m.inProgress = true;
      m.everStarted = true;
      m.upper = this.keysOf(binding).reduce((max, k) => Math.max(max, k.seq), 0);
      if (policy.kind === 'cron') {
        m.checkpoint = Math.max(m.checkpoint ?? -Infinity, fireAt as number);
      } else {
        // interval: the checkpoint is the database time of this start.
        const at = start.lastScheduleCheckpointAt?.getTime();
        if (at === undefined || at < stateBefore.dbNow.getTime() || at > start.dbNow.getTime()) {
          this.fail(
            `beginScan(interval) checkpoint ${start.lastScheduleCheckpointAt?.toISOString()} is not the database time of the start (between ${stateBefore.dbNow.toISOString()} and ${start.dbNow.toISOString()})`,
          );
        }
        m.checkpoint = at;
      }
    }
    const nextDueAt = policy.kind === 'interval' && m.checkpoint !== null ? m.checkpoint + policy.intervalSeconds * 1000 : null;
    this.same(
      {
        bindingName: start.bindingName,
        outcome: start.outcome,
        scanGeneration: start.scanGeneration,
        scanUpperPendingSequence: start.scanUpperPendingSequence,
        scanInProgress: start.scanInProgress,
        lastScheduleCheckpointAt: start.lastScheduleCheckpointAt?.getTime() ?? null,
        nextDueAt: start.nextDueAt?.getTime() ?? null,
      },
      {
        bindingName: binding,
        outcome: predicted,
        scanGeneration: m.scanGeneration,
        scanUpperPendingSequence: m.upper,
        scanInProgress: m.inProgress,
        lastScheduleCheckpointAt: m.checkpoint,
        nextDueAt,
      },
      `beginScan(${binding}, ${policyText})`,
    );
    return start;
  }

  /** Advances the scan life cycle of a binding by one operation: begin/resume, admit a page, or finish. */
  private async opScan(): Promise<void> {
    const binding = this.pick(BINDINGS);
    const m = this.bindings.get(binding)!;
    const cursor = this.cursors.get(binding) ?? null;

    if (!m.inProgress) {
      const state = await this.checkBinding(binding);
      let policy: SchedulePolicy;
      const r = this.rng();
      if (r < 0.08) policy = { kind: 'off' };
      else if (r < 0.2 || (m.checkpoint === null && r < 0.75)) policy = { kind: 'interval', intervalSeconds: 3600 };
      else if (r < 0.32 && m.checkpoint !== null) {
        // The same cron fire again (must not start a second scan), or an older one (checkpoint only moves forward).
        policy = { kind: 'cron', fireAt: new Date(m.checkpoint - (this.chance(0.5) ? 0 : this.int(1, 5000))) };
      } else policy = { kind: 'cron', fireAt: state.dbNow };
      const start = await this.begin(binding, policy, state);
      if (start.outcome === 'started') this.cursors.set(binding, { generation: start.scanGeneration, after: 0, exhausted: false });
      await this.checkBinding(binding);
      return;
    }

    if (cursor === null || cursor.generation !== m.scanGeneration || this.chance(0.03)) {
      // After a crash or takeover (no cursor), or just again: the unfinished scan is resumed
      // whatever the policy, and paging restarts from the first page.
      const state = await this.checkBinding(binding);
      const policy: SchedulePolicy = this.pick<SchedulePolicy>([
        { kind: 'cron', fireAt: state.dbNow },
        { kind: 'interval', intervalSeconds: 3600 },
        { kind: 'off' },
      ]);
      const start = await this.begin(binding, policy, state);
      this.cursors.set(binding, { generation: start.scanGeneration, after: 0, exhausted: false });
      return;
    }

    if (cursor.exhausted || this.chance(0.04)) {
      const premature = !cursor.exhausted;
      const fin = await this.store.finishScan(this.term, binding, cursor.generation);
      this.log(`finishScan(${binding}, gen=${cursor.generation})${premature ? ' [premature]' : ''} -> ${fin.outcome}`);
      this.count(premature ? 'finish:premature' : 'finish');
      this.same(
        [fin.outcome, fin.scanGeneration, fin.lastScheduleCheckpointAt?.getTime() ?? null],
        ['finished', m.scanGeneration, m.checkpoint],
        `finishScan(${binding})`,
      );
      m.inProgress = false;
      if (this.chance(0.3)) {
        const again = await this.store.finishScan(this.term, binding, cursor.generation);
        this.log(`finishScan(${binding}, gen=${cursor.generation}) again -> ${again.outcome}`);
        this.same([again.outcome, again.scanGeneration], ['already_finished', m.scanGeneration], `finishScan(${binding}) again`);
      }
      this.cursors.set(binding, null);
      await this.checkBinding(binding);
      return;
    }

    await this.admitPage(binding, cursor);
  }

  private async admitPage(binding: string, cursor: Cursor): Promise<void> {
    const m = this.bindings.get(binding)!;
    const limit = this.int(1, 4);
    // Sometimes re-run an earlier page of the same scan: nothing may be admitted twice.
    const rerun = cursor.after > 0 && this.chance(0.1);
    const after = rerun ? this.int(0, cursor.after) : cursor.after;
    // Keys the supervisor holds (in flight) are mostly excluded, plus a few random ones.
    const excluded = new Set<string>();
    for (const inv of this.inflight) if (inv.binding === binding && this.chance(0.7)) excluded.add(inv.scopeId);
    for (const s of SCOPES) if (this.chance(0.08)) excluded.add(s);
    const candidates = this.keysOf(binding).filter(
      (k) => k.dirty > k.clean && k.seq > after && k.seq <= (m.upper as number) && k.lastAutoScan < m.scanGeneration && !excluded.has(k.scopeId),
    );
    const admitted = candidates.slice(0, limit);
    const page = await this.store.admitScanPage(this.term, binding, cursor.generation, after, limit, excluded.size > 0 ? [...excluded] : undefined);
    this.log(
      `admitScanPage(${binding}, gen=${cursor.generation}, after=${after}, limit=${limit}, exclude=[${[...excluded].join('|')}])${rerun ? ' [rerun]' : ''} -> [${page.keys.map((k) => `${k.scopeId}:${k.requestedGeneration}`).join(', ')}]`,
    );
    this.count(rerun ? 'admit:rerun' : 'admit');
    this.stats.admittedKeys = (this.stats.admittedKeys ?? 0) + page.keys.length;
    for (const k of admitted) {
      if (k.requested <= k.handled) k.requested += 1; // otherwise the outstanding request is reused
      k.lastAutoScan = m.scanGeneration;
    }
    const expected: KeyPage = {
      keys: admitted.map((k) => this.gens(k)),
      nextAfterSequence: admitted.length > 0 ? admitted[admitted.length - 1].seq : after,
      exhausted: admitted.length < limit,
    };
    this.same(page, expected, `admitScanPage(${binding}, after=${after}, limit=${limit})`);
    for (const k of page.keys) this.checkInvariants(k, 'admitted key');
    cursor.after = Math.max(cursor.after, page.nextAfterSequence);
    cursor.exhausted = cursor.exhausted || page.exhausted;
    for (const s of SCOPES) await this.checkKey(binding, s);
    await this.checkOwed(binding);
  }

  /** The supervisor loses its in-memory scan positions (restart within the same term). */
  private opCrash(): void {
    for (const b of BINDINGS) this.cursors.set(b, null);
    this.log('crash: scan cursors dropped');
    this.count('crash');
  }

  /** Another holder takes over: a new term; old workers (in flight) stay alive with the old term. */
  private async opTakeover(): Promise<void> {
    await this.acquireNewTerm();
    for (const b of BINDINGS) this.cursors.set(b, null);
    this.count('takeover');
  }

  /** Fenced operations with a term that is not the live one, or a scan generation that is not in progress. */
  private async opFenced(): Promise<void> {
    const binding = this.pick(BINDINGS);
    const m = this.bindings.get(binding)!;
    const stale: Term =
      this.chance(0.5) && this.term.supervisorGeneration > 1
        ? { ...this.term, supervisorGeneration: this.term.supervisorGeneration - 1 }
        : this.chance(0.5)
          ? { ...this.term, holderId: 'intruder' }
          : { ...this.term, supervisorGeneration: this.term.supervisorGeneration + 1 };
    const r = this.rng();
    const gen = Math.max(1, m.scanGeneration);
    if (r < 0.2) {
      this.count('fenced:begin');
      await this.expectError(`beginScan with stale term ${stale.holderId}@${stale.supervisorGeneration}`, 'term_lost', () =>
        this.store.beginScan(stale, binding, { kind: 'cron', fireAt: new Date(Date.now() - 3_600_000) }),
      );
    } else if (r < 0.4) {
      this.count('fenced:admit');
      await this.expectError(`admitScanPage with stale term ${stale.holderId}@${stale.supervisorGeneration}`, 'term_lost', () =>
        this.store.admitScanPage(stale, binding, gen, 0, 10),
      );
    } else if (r < 0.5) {
      this.count('fenced:finish');
      await this.expectError(`finishScan with stale term ${stale.holderId}@${stale.supervisorGeneration}`, 'term_lost', () =>
        this.store.finishScan(stale, binding, gen),
      );
    } else if (r < 0.65) {
      const k = this.keysOf(binding).find((x) => x.requested > x.handled);
      if (!k) return;
      this.count('fenced:ack');
      await this.expectError(`ack(${binding}, ${k.scopeId}) with stale term ${stale.holderId}@${stale.supervisorGeneration}`, 'term_lost', () =>
        this.withMode('tx', (tx) =>
          this.store.ackInvocation(
            stale,
            {
              bindingName: binding,
              scopeId: k.scopeId,
              claimedRequestGeneration: k.requested,
              cleanThroughDirtyGeneration: k.dirty,
            },
            tx as never,
          ),
        ),
      );
      await this.checkKey(binding, k.scopeId);
    } else if (r < 0.85) {
      // A scan generation that is not the one in progress (or no scan in progress at all).
      const wrong = m.inProgress ? (this.chance(0.5) ? m.scanGeneration + 1 : Math.max(1, m.scanGeneration - 1)) : gen;
      if (m.inProgress && wrong === m.scanGeneration) return;
      this.count('fenced:scan_stale_admit');
      await this.expectError(`admitScanPage(${binding}, gen=${wrong}) [in progress: ${m.inProgress ? m.scanGeneration : 'none'}]`, 'scan_stale', () =>
        this.store.admitScanPage(this.term, binding, wrong, 0, 10),
      );
    } else if (r < 0.92) {
      const wrong = m.scanGeneration + 1;
      this.count('fenced:scan_stale_finish');
      await this.expectError(`finishScan(${binding}, gen=${wrong})`, 'scan_stale', () => this.store.finishScan(this.term, binding, wrong));
    } else {
      const state = await this.store.readBindingState(binding);
      this.count('fenced:cron_in_future');
      await this.expectError(`beginScan(${binding}, cron fire one hour ahead of the database)`, 'cron_fire_in_future', () =>
        this.store.beginScan(this.term, binding, { kind: 'cron', fireAt: new Date(state.dbNow.getTime() + 3_600_000) }),
      );
    }
    await this.checkBinding(binding);
    await this.checkOwed(binding);
  }

  async run(steps: number): Promise<void> {
    await this.setup();
    const ops: Array<[number, () => Promise<void> | void]> = [
      [20, () => this.opMark('dirty')],
      [9, () => this.opMark('request')],
      [12, () => this.opSnapshot()],
      [13, () => this.opAck()],
      [3, () => this.opBadAck()],
      [24, () => this.opScan()],
      [2, () => this.opCrash()],
      [1, () => this.opTakeover()],
      [3, () => this.opFenced()],
    ];
    const total = ops.reduce((s, [w]) => s + w, 0);
    for (this.step = 1; this.step <= steps; this.step += 1) {
      let r = this.rng() * total;
      const op = ops.find(([w]) => (r -= w) < 0) ?? ops[ops.length - 1];
      try {
        await op[1]();
        if (this.step % 25 === 0) await this.checkAll();
      } catch (error) {
        if (error instanceof Error && error.message.includes('model mismatch')) throw error;
        this.fail(`unexpected error: ${error instanceof Error ? error.stack : String(error)}`);
      }
    }
    this.step = steps;
    await this.checkAll();
  }
}

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  {
    describe(`[${backend}] model: random intent, scan and acknowledgement sequences agree with the generation model`, () => {
      for (const seed of SEEDS) {
        test(`seed ${seed} (${STEPS} steps)`, async () => {
          console.log(`[${backend}] model seed ${seed} (reproduce with APSUP_MODEL_SEEDS=${seed})`);
          const fx = await createBackend(backend);
          try {
            const run = new ModelRun(backend, fx.store, seed);
            const started = Date.now();
            await run.run(STEPS);
            console.log(`[${backend}] seed ${seed}: ${STEPS} steps in ${Date.now() - started} ms`, JSON.stringify(run.stats));
            // The sequence must actually have exercised what it claims to test.
            const s = run.stats;
            const sum = (match: (name: string) => boolean) =>
              Object.entries(s)
                .filter(([k]) => match(k))
                .reduce((a, [, v]) => a + v, 0);
            assert.ok(sum((k) => k === 'begin:cron:started') >= 3, 'several scans started');
            assert.ok(sum((k) => k.startsWith('begin:') && k.endsWith(':resumed')) >= 1, 'an unfinished scan was resumed');
            assert.ok(sum((k) => k.startsWith('begin:') && k.endsWith(':not_due')) >= 1, 'a begin was not due');
            assert.ok(sum((k) => k.startsWith('admit')) >= 20 && (s.admittedKeys ?? 0) >= 10, 'pages admitted keys');
            assert.ok(sum((k) => k.startsWith('ack:acknowledged')) >= 10, 'acknowledgements');
            assert.ok(sum((k) => k.startsWith('ack:already_handled')) >= 3, 'already handled acknowledgements');
            assert.ok(sum((k) => k.startsWith('bad-ack:') || k.startsWith('fenced:')) >= 5, 'refused operations');
          } finally {
            await fx.cleanup();
          }
        });
      }
    });

    describe(`[${backend}] model: scope ids are opaque, case-sensitive keys`, () => {
      // identifiers.ts: a scope id is 1..191 characters without commas, control characters or
      // leading/trailing whitespace (MySQL *_bin collations are PAD SPACE, so 'k1' and 'k1 ' would
      // collide there but not on SQLite: such ids are refused on both backends before SQL).
      test('case makes different keys; leading or trailing whitespace is refused on both backends', async () => {
        const fx = await createBackend(backend);
        try {
          const { store } = fx;
          const variants = ['k1', 'K1', 'k 1', 'K 1'];
          const seqs = new Set<number>();
          for (const scopeId of variants) {
            const snap = await store.markDirty('topic-memory', scopeId);
            assert.equal(snap.scopeId, scopeId, `markDirty(${JSON.stringify(scopeId)}) returned the row of ${JSON.stringify(snap.scopeId)}`);
            assert.equal(snap.dirtyGeneration, 1, `markDirty(${JSON.stringify(scopeId)}) incremented an existing key (dirty ${snap.dirtyGeneration})`);
            seqs.add(snap.pendingSequence);
          }
          assert.equal(seqs.size, variants.length, 'each variant registers its own pending_sequence');
          for (const scopeId of variants) {
            const read = await store.readIntent('topic-memory', scopeId);
            assert.equal(read?.scopeId, scopeId);
          }
          for (const bad of ['k1 ', ' k1', 'k1\t']) {
            await assert.rejects(store.markDirty('topic-memory', bad), (e: unknown) => (e as { code?: string }).code === 'invalid_argument');
            await assert.rejects(store.acceptRequest('topic-memory', bad), (e: unknown) => (e as { code?: string }).code === 'invalid_argument');
          }
          const k1 = await store.readIntent('topic-memory', 'k1');
          assert.equal(k1?.dirtyGeneration, 1, 'refused ids changed nothing');
        } finally {
          await fx.cleanup();
        }
      });
    });
  }
}
