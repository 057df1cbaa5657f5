/**
 * SIGINT/SIGTERM of a long-running command. The first signal asks for the clean shutdown; a
 * second one during it forces the exit, but only after `force` ran (bounded): the term is
 * invalidated and the SQLite host lock released even then, so a forced exit never leaves a
 * live-looking term or a stale lock behind (RFC 9 shutdown).
 */
import type { Logger } from '../logging.ts';

/** Bound of the forced path: past it the process exits anyway (the lease then expires). */
export const FORCE_BOUND_MS = 5_000;

export class ShutdownSignals {
  readonly requested: Promise<string>;
  private resolve!: (signal: string) => void;
  private signal: string | null = null;
  private forcing = false;
  private force: (() => Promise<void>) | null = null;
  private readonly onInt = () => this.receive('SIGINT');
  private readonly onTerm = () => this.receive('SIGTERM');

  constructor(
    private readonly logger: Logger,
    private readonly exit: (code: number) => void = (code) => process.exit(code),
  ) {
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
      this.request(signal);
      return;
    }
    if (this.forcing) return;
    this.forcing = true;
    const code = signal === 'SIGTERM' ? 143 : 130;
    this.logger.warn(
      { signal, first: this.signal },
      'second signal during shutdown: forcing (invalidating the term and releasing the host lock, then exiting)',
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

  /** Removes the handlers (after the clean shutdown finished). */
  dispose(): void {
    process.off('SIGINT', this.onInt);
    process.off('SIGTERM', this.onTerm);
  }
}
