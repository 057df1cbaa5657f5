/**
 * Owed-request discovery of one family (requested > handled, RFC 5) in laps over
 * pending_sequence. The cursor is kept across examinations, so busy keys (ready, running,
 * retry-wait) are passed over once per lap and never hold later keys back. A request notified
 * behind the cursor, or while a page is read, is found by one more lap that starts when this one
 * completes: restarting at once would let a stream of requests for early keys keep the lap from
 * ever reaching the later ones.
 */
import type { Clock } from './clock.ts';

/** Owed-request pages read per examination before the other families get their turn. */
export const OWED_PAGES_PER_EXAMINATION = 4;

export interface OwedPage {
  keys: Array<{ scopeId: string; pendingSequence: number; requestedGeneration: number }>;
  exhausted: boolean;
}

/** What a lap reads from and writes into (the partition's store and key table). */
export interface OwedTarget {
  read(afterSequence: number, limit: number): Promise<OwedPage>;
  busy(scopeId: string): boolean;
  /**
   * A busy key found owed up to requestedGeneration: its running invocation may have claimed less
   * (a request accepted after its read, even after its acknowledgement committed).
   */
  passedOver(scopeId: string, requestedGeneration: number): void;
  room(): number;
  /** Puts an owed key into the ready queue (room was checked). */
  enqueue(scopeId: string): void;
  /** Asks for another examination (pages remain and the queue has room). */
  wake(): void;
}

type Lap =
  | { mode: 'idle' }
  /** fresh: no page of this lap read yet (a notification may still lower its start). */
  | { mode: 'lapping'; cursor: number; fresh: boolean; reading: boolean; revisitFrom: number | null };

export class OwedDiscovery {
  private lap: Lap = { mode: 'lapping', cursor: 0, fresh: true, reading: false, revisitFrom: null };
  /** Duration of the last discovery (ms, monotonic). */
  lastDurationMs = 0;

  constructor(
    private readonly clock: Clock,
    private readonly pageSize: number,
  ) {}

  /** A lap is in progress or due. */
  get needed(): boolean {
    return this.lap.mode === 'lapping';
  }

  /**
   * An explicit request was accepted. With the key's pending sequence the lap can start just
   * before it; without it (a poll, a foreign commit) anything may have changed.
   */
  notify(pendingSequence?: number): void {
    const at = pendingSequence !== undefined && pendingSequence > 0 ? pendingSequence - 1 : 0;
    const lap = this.lap;
    if (lap.mode === 'idle') {
      this.lap = { mode: 'lapping', cursor: at, fresh: true, reading: false, revisitFrom: null };
    } else if (lap.fresh && !lap.reading) {
      lap.cursor = Math.min(lap.cursor, at);
    } else if (lap.reading || at < lap.cursor) {
      lap.revisitFrom = Math.min(lap.revisitFrom ?? Number.MAX_SAFE_INTEGER, at);
    }
  }

  /** A new term: a lap from the start (a page read in flight finishes into it, as before). */
  reset(): void {
    if (this.lap.mode === 'idle') {
      this.lap = { mode: 'lapping', cursor: 0, fresh: true, reading: false, revisitFrom: null };
    } else {
      Object.assign(this.lap, { cursor: 0, fresh: true, revisitFrom: null });
    }
  }

  /**
   * Reads owed keys from the lap's cursor while the ready queue has room, up to a few pages per
   * examination; when pages remain it asks for another examination (after the other families)
   * instead of waiting for an unrelated wake-up.
   */
  async discover(target: OwedTarget): Promise<void> {
    const started = this.clock.monotonic();
    for (let pages = 0; pages < OWED_PAGES_PER_EXAMINATION && this.lap.mode === 'lapping' && target.room() > 0; pages += 1) {
      const lap = this.lap;
      const limit = Math.min(this.pageSize, Math.max(64, target.room() * 4));
      lap.fresh = false;
      lap.reading = true;
      let page: OwedPage;
      try {
        page = await target.read(lap.cursor, limit);
      } finally {
        lap.reading = false;
      }
      let consumedAll = true;
      for (const key of page.keys) {
        // A busy key is owed but already provided for (its dispatch, successor or retry), unless
        // its invocation claimed less than this: then it owes a successor (passedOver).
        if (target.busy(key.scopeId)) {
          target.passedOver(key.scopeId, key.requestedGeneration);
          lap.cursor = key.pendingSequence;
          continue;
        }
        if (target.room() <= 0) {
          consumedAll = false;
          break;
        }
        target.enqueue(key.scopeId);
        lap.cursor = key.pendingSequence;
      }
      if (!consumedAll) break; // the queue is full: the lap goes on from here when room frees
      if (page.exhausted) {
        if (lap.revisitFrom !== null) {
          this.lap = { mode: 'lapping', cursor: lap.revisitFrom, fresh: true, reading: false, revisitFrom: null };
        } else {
          this.lap = { mode: 'idle' };
        }
      }
    }
    if (this.needed && target.room() > 0) target.wake();
    this.lastDurationMs = this.clock.monotonic() - started;
  }
}
