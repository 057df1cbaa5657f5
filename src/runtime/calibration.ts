/**
 * The pending-work calibration of one family before a scheduled check (RFC 1): the provider's
 * remarkDirty runs in the background, bounded by the discovery deadline, so a slow or hanging
 * provider delays only this family's scan, never the supervisor loop (RFC 1, 2). A failure or a
 * timeout only delays the scan: the family is degraded, the scan goes on over the dirty marks
 * that exist, and the calibration is tried again at a later check, not before the retry base.
 */
import type { PendingWorkProvider } from '../registry/registration.ts';
import type { Logger } from '../logging.ts';
import type { Clock } from './clock.ts';

/** What a calibration run needs from the partition. */
export interface CalibrationContext {
  bindingName: string;
  family: string;
  markDirty(scopeId: string): Promise<void>;
  query(sql: string, params: unknown[] | undefined, signal: AbortSignal): Promise<Record<string, unknown>[]>;
  /** The run ended (well or not): look at the family again. */
  wake(): void;
  providerFailed(message: string): void;
  providerSucceeded(): void;
}

type Run =
  | { mode: 'idle' }
  | { mode: 'running'; controller: AbortController }
  /** Done, its outcome not yet used by a check. */
  | { mode: 'done'; ok: boolean };

export class ProviderCalibration {
  private run: Run = { mode: 'idle' };
  private blockedUntil = 0;

  constructor(
    private readonly provider: PendingWorkProvider | undefined,
    private readonly settings: { discoveryTimeoutMs: number; retryBaseMs: number },
    private readonly context: CalibrationContext,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  get inFlight(): boolean {
    return this.run.mode === 'running';
  }

  /**
   * Whether the calibration for the next check is done; starts one when none ran for it. Until
   * it has ended the check stays pending (false).
   */
  ready(): boolean {
    if (!this.provider?.remarkDirty) return true;
    if (this.run.mode === 'running') return false;
    if (this.run.mode === 'done') {
      this.run = { mode: 'idle' };
      return true;
    }
    if (this.clock.now() < this.blockedUntil) return true; // failed recently: scan without recalibrating
    const controller = new AbortController();
    this.run = { mode: 'running', controller };
    void this.calibrate(controller)
      .then((ok) => {
        if (this.run.mode === 'running' && this.run.controller === controller) this.run = { mode: 'done', ok };
      })
      .finally(() => this.context.wake());
    return false;
  }

  /** A new term: an outcome not yet used is dropped (a run in flight still ends as done). */
  reset(): void {
    if (this.run.mode === 'done') this.run = { mode: 'idle' };
  }

  /** Shutdown: a run in flight is aborted. */
  abort(): void {
    if (this.run.mode === 'running') this.run.controller.abort(new Error('shutting down'));
  }

  private async calibrate(controller: AbortController): Promise<boolean> {
    const provider = this.provider;
    if (!provider?.remarkDirty) return true;
    const { bindingName, family } = this.context;
    const timer = this.clock.setTimeout(() => controller.abort(new Error('discovery deadline passed')), this.settings.discoveryTimeoutMs, { ref: true });
    try {
      const work = provider.remarkDirty({
        bindingName,
        family,
        signal: controller.signal,
        limit: 10_000,
        markDirty: (scopeId) => this.context.markDirty(scopeId),
        query: (sql, params) => this.context.query(sql, params, controller.signal),
      });
      const aborted = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }));
      await Promise.race([work, aborted]);
      this.context.providerSucceeded();
      return true;
    } catch (error) {
      this.context.providerFailed((error as Error).message);
      this.blockedUntil = this.clock.now() + this.settings.retryBaseMs;
      this.logger.error(
        { binding: bindingName, family, stage: 'discovery', errorType: (error as Error).name, err: (error as Error).message },
        'pending-work provider failed; the family is degraded and its scan goes on over the existing dirty marks',
      );
      return false;
    } finally {
      timer.cancel();
    }
  }
}
