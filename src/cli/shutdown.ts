/**
 * SIGINT/SIGTERM of a long-running command. The first signal asks for the clean shutdown; a
 * second one during it forces the exit, but only after `force` ran (bounded): the worker children
 * are killed, the term is invalidated and the SQLite host lock released even then, so a forced
 * exit never leaves a live-looking term, a stale lock or an orphaned worker behind (RFC 9
 * shutdown).
 *
 * One Ctrl-C often arrives twice: the terminal signals the whole process group and `npm start`
 * relays the same SIGINT to its child a few milliseconds later. A signal within REPEAT_WINDOW_MS
 * of the first is that same keypress and is ignored; only a later one forces.
 */
import type { Logger } from '../logging.ts';
import { systemClock, type Clock } from '../runtime/clock.ts';

/** Bound of the forced path: past it the process exits anyway (the lease then expires). */
export const FORCE_BOUND_MS = 5_000;
/** A second signal this soon after the first is the same keypress (relayed by npm), not a request to force. */
export const REPEAT_WINDOW_MS = 1_500;

export interface ShutdownSignalsOptions {
  exit?: (code: number) => void;
  clock?: Clock;
}

export class ShutdownSignals {
  readonly requested: Promise<string>;
  private resolve!: (signal: string) => void;
  private signal: string | null = null;
  /** Monotonic time of the first signal received (null: none yet, or the stop came from inside). */
  private firstSignalAt: number | null = null;
  private forcing = false;
  private force: (() => Promise<void>) | null = null;
  private readonly exit: (code: number) => void;
  private readonly clock: Clock;
  private readonly onInt = () => this.receive('SIGINT');
  private readonly onTerm = () => this.receive('SIGTERM');

  constructor(
    private readonly logger: Logger,
    options: ShutdownSignalsOptions = {},
  ) {
    this.exit = options.exit ?? ((code) => process.exit(code));
    this.clock = options.clock ?? systemClock;
    this.requested = new Promise((r) => {
      this.resolve = r;
    });
    process.on('SIGINT', this.onInt);
    process.on('SIGTERM', this.onTerm);
  }

  /** What a second signal does before the process exits. */
  onForce(force: () => Promise<void>): void {
    this.force = force;
  }

  /** A stop requested from inside (a fatal runtime error): a later signal forces like a second one. */
  request(reason: string): void {
    if (this.signal === null) {
      this.signal = reason;
      this.resolve(reason);
    }
  }

  private receive(signal: string): void {
    if (this.signal === null) {
      this.firstSignalAt = this.clock.monotonic();
      this.request(signal);
      // Tells the operator (and a test) from when on another signal forces.
      this.clock.setTimeout(() => {
        if (!this.forcing) this.logger.info({ signal }, 'shutting down cleanly; a further signal now forces the exit');
      }, REPEAT_WINDOW_MS);
      return;
    }
    if (this.forcing) return;
    if (this.firstSignalAt !== null && this.clock.monotonic() - this.firstSignalAt < REPEAT_WINDOW_MS) {
      this.logger.debug({ signal, first: this.signal }, 'repeated signal right after the first: the same keypress, ignored');
      return;
    }
    this.forcing = true;
    const code = signal === 'SIGTERM' ? 143 : 130;
    this.logger.warn(
      { signal, first: this.signal },
      'second signal during shutdown: forcing (killing the workers, invalidating the term and releasing the host lock, then exiting)',
    );
    const timer = setTimeout(() => this.exit(code), FORCE_BOUND_MS);
    timer.unref();
    void (this.force?.() ?? Promise.resolve())
      .catch((error: Error) => {
        this.logger.error({ err: error.message }, 'forced shutdown: cleanup failed');
      })
      .finally(() => {
        clearTimeout(timer);
        this.exit(code);
      });
  }

  /**
   * Removes the handlers (after the clean shutdown finished). Within the repeat window they stay
   * until it ends: a relayed copy of the first signal arriving after a quick shutdown would
   * otherwise kill the process by its default action.
   */
  dispose(): void {
    const remove = () => {
      process.off('SIGINT', this.onInt);
      process.off('SIGTERM', this.onTerm);
    };
    this.forcing = true; // nothing left to force
    const left = this.firstSignalAt === null ? 0 : REPEAT_WINDOW_MS - (this.clock.monotonic() - this.firstSignalAt);
    if (left > 0) this.clock.setTimeout(remove, left);
    else remove();
  }
}
