/**
 * The health of one family (RFC 8: a family's errors lower only that family's health), from
 * three sources: the last failed examination (until the next good one), the pending-work
 * provider (until its next good calibration) and the invocation streak (invocation-health.ts).
 * The condition says which source set it, so a good examination never clears a provider's
 * failure and a good calibration never clears an examination's.
 */
import { InvocationHealth } from './invocation-health.ts';

export type FamilyCondition = { kind: 'ok' } | { kind: 'examination_failed'; message: string } | { kind: 'provider_failed'; message: string };

export class FamilyHealth {
  private condition: FamilyCondition = { kind: 'ok' };
  /** An examination failed and no good one has followed yet. */
  private examinationError = false;
  readonly invocations = new InvocationHealth();

  get current(): FamilyCondition {
    return this.condition;
  }

  examinationFailed(message: string): void {
    this.condition = { kind: 'examination_failed', message };
    this.examinationError = true;
  }

  /** A good examination clears what a failed one set (not a provider failure set since). */
  examinationSucceeded(): void {
    if (!this.examinationError) return;
    this.examinationError = false;
    if (this.condition.kind !== 'provider_failed') this.condition = { kind: 'ok' };
  }

  providerFailed(message: string): void {
    this.condition = { kind: 'provider_failed', message };
  }

  providerSucceeded(): void {
    if (this.condition.kind === 'provider_failed') this.condition = { kind: 'ok' };
  }

  get state(): 'ok' | 'degraded' {
    return this.invocations.degraded || this.condition.kind !== 'ok' ? 'degraded' : 'ok';
  }

  /** The reason shown: the condition's, else the invocation streak's while degraded. */
  get lastError(): string | null {
    switch (this.condition.kind) {
      case 'ok':
        return this.invocations.lastError;
      case 'examination_failed':
        return this.condition.message;
      case 'provider_failed':
        return `provider: ${this.condition.message}`;
      default:
        return null; // unreachable: the switch is exhaustive
    }
  }
}
