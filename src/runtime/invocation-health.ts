/**
 * Family health from invocation outcomes (RFC 8: a family's processing errors lower only that
 * family's health): while every invocation of the family keeps failing — this many in a row
 * with no acknowledged one between — the family is degraded; its next acknowledged invocation
 * clears it. A progress conflict is neither (it is re-dispatched, RFC 7).
 */
export const FAILING_STREAK_DEGRADES = 3;

export class InvocationHealth {
  private streak = 0;
  private last: string | null = null;

  failed(reason: string, message: string): void {
    this.streak += 1;
    this.last = `${reason}: ${message}`;
  }

  succeeded(): void {
    this.streak = 0;
    this.last = null;
  }

  get degraded(): boolean {
    return this.streak >= FAILING_STREAK_DEGRADES;
  }

  /** The reason shown while degraded. */
  get lastError(): string | null {
    return this.degraded ? `${this.streak} invocations failed in a row (last: ${this.last})` : null;
  }
}
