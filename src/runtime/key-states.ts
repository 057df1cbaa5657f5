/**
 * The per-key state of one family partition: one map of a union, so a key is at most one of
 * ready, running, settling (its worker returned, the supervisor commits its acknowledgement) or
 * retry-wait (RFC 2, 7: a busy key is never admitted twice). Each transition names the modes it
 * leaves; any other move is a bug and throws. The ready queue keeps its order beside the map.
 * Nothing here survives a crash: the stored operations recover it.
 */
import type { Term } from '../store/types.ts';

/** What brought a key into the ready queue. */
export type ReadySource = 'request' | 'scan' | 'retry' | 'successor';

/** One invocation of a key: its worker, its term and the generation it claimed (0 until read). */
export interface Invocation {
  workerId: string;
  term: Term;
  generation: number;
  source: ReadySource;
  /**
   * The highest generation owed discovery found owed while the key was busy (owedWhileBusy). Above
   * `generation` (known once the invocation read its intent), it is a request this invocation does
   * not cover: it owes a successor whatever its acknowledgement's row says (a request accepted
   * after that commit is in no row it read).
   */
  owedSeen?: number;
}

/**
 * `origin`: for a key that failed, the trigger that first brought it in (the failure records of
 * its retries name it, RFC 12); cleared by the next term.
 */
export type KeyState =
  | { mode: 'ready'; source: ReadySource; origin?: ReadySource }
  | { mode: 'running'; invocation: Invocation; origin?: ReadySource }
  | { mode: 'settling'; invocation: Invocation; origin?: ReadySource }
  | { mode: 'retry_wait'; origin?: ReadySource };

export type KeyMode = KeyState['mode'];

export class IllegalKeyTransition extends Error {
  constructor(key: string, from: KeyMode | 'absent', to: string) {
    super(`key ${JSON.stringify(key)}: no transition from ${from} to ${to}`);
    this.name = 'IllegalKeyTransition';
  }
}

export class KeyStateTable {
  private readonly states = new Map<string, KeyState>();
  /** Ready keys in dispatch order (each has mode 'ready' in the map). */
  private readonly queue: string[] = [];
  private counts: Record<KeyMode, number> = { ready: 0, running: 0, settling: 0, retry_wait: 0 };

  /** @param capacity the bounded ready queue's size (READY_QUEUE_SIZE) */
  constructor(readonly capacity: number) {}

  get(key: string): KeyState | undefined {
    return this.states.get(key);
  }

  /** Ready, running, settling or retry-wait: provided for, not to be admitted again. */
  busy(key: string): boolean {
    return this.states.has(key);
  }

  count(mode: KeyMode): number {
    return this.counts[mode];
  }

  /** Free places in the ready queue. */
  room(): number {
    return this.capacity - this.counts.ready;
  }

  /** Ready keys that the automatic scan admitted. */
  readyFromScan(): number {
    let n = 0;
    for (const key of this.queue) if ((this.states.get(key) as { source: ReadySource }).source === 'scan') n += 1;
    return n;
  }

  /** Keys in the given modes, in map order (ready: in queue order). */
  keys(mode: KeyMode): string[] {
    if (mode === 'ready') return [...this.queue];
    const out: string[] = [];
    for (const [key, state] of this.states) if (state.mode === mode) out.push(key);
    return out;
  }

  /** The invocation of a running or settling key. */
  invocationOf(key: string): Invocation | undefined {
    const s = this.states.get(key);
    return s && (s.mode === 'running' || s.mode === 'settling') ? s.invocation : undefined;
  }

  /**
   * Owed discovery passed over this busy key, owed up to requestedGeneration: a running or settling
   * invocation keeps the highest such generation (owedSeen); a ready or retry-waiting key reads its
   * intent when it is dispatched.
   */
  owedWhileBusy(key: string, requestedGeneration: number): void {
    const invocation = this.invocationOf(key);
    if (invocation) invocation.owedSeen = Math.max(invocation.owedSeen ?? 0, requestedGeneration);
  }

  /** Enqueues an idle key; false (nothing changes) when the key is busy or the queue is full. */
  enqueue(key: string, source: ReadySource): boolean {
    if (this.states.has(key) || this.room() <= 0) return false;
    this.set(key, { mode: 'ready', source });
    this.queue.push(key);
    return true;
  }

  /** The next ready key, without taking it. */
  peek(): string | undefined {
    return this.queue[0];
  }

  /** ready → running: takes the head of the queue for `start(key, source)`'s invocation. */
  startNext(start: (key: string, source: ReadySource) => Omit<Invocation, 'source'>): { key: string; invocation: Invocation } | undefined {
    const key = this.queue.shift();
    if (key === undefined) return undefined;
    const state = this.expect(key, ['ready'], 'running') as Extract<KeyState, { mode: 'ready' }>;
    const invocation: Invocation = { ...start(key, state.source), source: state.source };
    this.set(key, { mode: 'running', invocation, origin: state.origin });
    return { key, invocation };
  }

  /** running → settling: the worker returned; its budget slot is free, the key stays busy. */
  settle(key: string): void {
    const state = this.expect(key, ['running'], 'settling') as Extract<KeyState, { mode: 'running' }>;
    this.set(key, { mode: 'settling', invocation: state.invocation, origin: state.origin });
  }

  /** running | settling → retry-wait (a failure or a conflict); `origin` as the failure record named it. */
  waitForRetry(key: string, origin?: ReadySource): void {
    const state = this.expect(key, ['running', 'settling'], 'retry_wait');
    this.set(key, { mode: 'retry_wait', origin: origin ?? state.origin });
  }

  /** retry-wait → ready (source 'retry'); false when the queue is full. */
  promote(key: string): boolean {
    const state = this.expect(key, ['retry_wait'], 'ready');
    if (this.room() <= 0) return false;
    this.set(key, { mode: 'ready', source: 'retry', origin: state.origin });
    this.queue.push(key);
    return true;
  }

  /** Ends an invocation: a running or settling key leaves the table (a retry-wait key stays). */
  finish(key: string): void {
    const state = this.states.get(key);
    if (state?.mode === 'running' || state?.mode === 'settling') this.delete(key);
  }

  /** A new term: ready and retry-wait keys are forgotten, invocations stay until they end, failure origins go. */
  resetForNewTerm(): void {
    this.dropReady();
    for (const [key, state] of [...this.states]) {
      if (state.mode === 'retry_wait') this.delete(key);
      else if (state.origin !== undefined) this.states.set(key, { ...state, origin: undefined });
    }
  }

  /** Shutdown: the ready queue is emptied. */
  dropReady(): void {
    for (const key of this.queue.splice(0)) this.delete(key);
  }

  private expect(key: string, from: KeyMode[], to: string): KeyState {
    const state = this.states.get(key);
    if (!state || !from.includes(state.mode)) throw new IllegalKeyTransition(key, state?.mode ?? 'absent', to);
    return state;
  }

  private set(key: string, state: KeyState): void {
    const previous = this.states.get(key);
    if (previous) this.counts[previous.mode] -= 1;
    this.counts[state.mode] += 1;
    this.states.set(key, state);
  }

  private delete(key: string): void {
    const previous = this.states.get(key);
    if (!previous) return;
    this.counts[previous.mode] -= 1;
    this.states.delete(key);
  }
}
