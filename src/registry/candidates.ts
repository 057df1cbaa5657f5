/**
 * A runtime start records its fingerprint per supervisor key and is refused when a live
 * candidate of the key runs with another one (RFC 8, 10): pc_aps_register_candidate, kept live
 * with pc_aps_refresh_candidate (MySQL/OceanBase, every renewal period; SQLite: one host, no
 * idle polling) and removed with pc_aps_withdraw_candidate at shutdown. Rows that expired (a
 * pause past the TTL) are registered again, compared like a start; refused, onConflict.
 */
import crypto from 'node:crypto';
import { ConfigError } from '../config/database-url.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { Logger } from '../logging.ts';
import { systemClock, type Clock, type ClockTimer } from '../runtime/clock.ts';
import type { BaseStore } from '../store/base-store.ts';
import type { Store } from '../store/types.ts';
import { canonical, fingerprintsOf, firstDifference, type FingerprintPart } from './fingerprint.ts';

/** A start refused because a live candidate runs with another configuration (exit 2). */
export class FingerprintMismatchError extends ConfigError {}

function parsePart(text: unknown): FingerprintPart | null {
  return typeof text === 'string' ? (JSON.parse(text) as FingerprintPart) : null;
}

export class CandidateRegistration {
  readonly candidateId = `${process.pid}-${crypto.randomUUID()}`;
  /**
   * A running candidate whose registration again was refused (run.ts stops the process, exit 2).
   * Called at most once; the candidate's rows are gone by then and it refreshes no more.
   */
  onConflict: ((error: FingerprintMismatchError) => void) | null = null;
  private timer: ClockTimer | null = null;
  /** The refresh (and registration again) in flight: one at a time, awaited by withdraw(). */
  private refreshing: Promise<void> | null = null;
  private stopped = false;

  /** `clock` paces the refreshes only; the rows' expiry is the database clock's (RFC 8). */
  constructor(
    private readonly store: Store,
    private readonly config: RuntimeConfig,
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
  ) {}

  private call(op: 'pc_aps_register_candidate' | 'pc_aps_refresh_candidate' | 'pc_aps_withdraw_candidate', params: Record<string, unknown>) {
    return (this.store as BaseStore).callOperation(op, params as never).then((sets) => sets[sets.length - 1] ?? []);
  }

  /** Registers every key of the mode; throws FingerprintMismatchError naming the first difference. */
  async register(): Promise<void> {
    await this.registerKeys('refusing to start');
    this.logger.info({ candidateId: this.candidateId, keys: fingerprintsOf(this.config).map((f) => f.supervisorKey) }, 'candidate fingerprint registered');
    // SQLite: one host (the host lock), rows never expire; no periodic statement while idle.
    if (this.config.database.backend !== 'sqlite') {
      this.timer = this.clock.setInterval(() => {
        // One at a time: a slow statement or the ticks right after a pause must not overlap.
        if (this.refreshing || this.stopped) return;
        this.refreshing = this.refresh().finally(() => {
          this.refreshing = null;
        });
      }, this.config.renewEveryMs);
    }
  }

  /** The register procedure for every key; on a conflict the keys registered so far are withdrawn. */
  private async registerKeys(verb: string): Promise<void> {
    for (const fp of fingerprintsOf(this.config)) {
      const shared = canonical(fp.shared);
      const execution = fp.execution ? canonical(fp.execution) : null;
      const [row] = await this.call('pc_aps_register_candidate', {
        supervisor_key: fp.supervisorKey,
        candidate_id: this.candidateId,
        role: this.config.role,
        shared_sha256: shared.sha256,
        shared_text: shared.text,
        execution_sha256: execution?.sha256 ?? null,
        execution_text: execution?.text ?? null,
        ttl_ms: this.config.leaseTtlMs,
      });
      if (row?.outcome !== 'conflict') continue;
      const theirsShared = parsePart(row.shared_text) ?? {};
      const theirsExecution = parsePart(row.execution_text);
      const diff = firstDifference(fp.shared, theirsShared) ?? (fp.execution && theirsExecution ? firstDifference(fp.execution, theirsExecution) : null);
      await this.deleteRows();
      const what = diff ? `first difference: ${diff.path} is ${diff.mine} here, ${diff.theirs} there` : 'their fingerprints differ';
      throw new FingerprintMismatchError(
        `${verb}: supervisor key ${fp.supervisorKey} has a live candidate ${String(row.candidate_id)} (role ${String(row.role)}) that runs with another configuration; ${what}. Every process of a deployment must use the same families module and schedule, budget and timeout settings (RFC 10)`,
      );
    }
  }

  private async refresh(): Promise<void> {
    const keys = fingerprintsOf(this.config).length;
    let liveKeys: number;
    try {
      const [row] = await this.call('pc_aps_refresh_candidate', { candidate_id: this.candidateId, ttl_ms: this.config.leaseTtlMs });
      liveKeys = Number(row?.live_keys ?? 0);
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'candidate fingerprint refresh failed');
      return;
    }
    if (liveKeys >= keys || this.stopped) return;
    // Expired (a pause past the TTL): a start with another fingerprint may have been accepted
    // meanwhile, so the refresh never revives the rows; registering again compares (RFC 8, 10).
    try {
      await this.registerKeys('stopping');
      this.logger.warn({ candidateId: this.candidateId, liveKeys, keys }, 'candidate fingerprint registered again');
    } catch (error) {
      if (!(error instanceof FingerprintMismatchError)) {
        this.logger.warn({ err: (error as Error).message }, 'candidate fingerprint registration failed; trying again at the next refresh');
        return;
      }
      this.stop();
      if (this.onConflict) this.onConflict(error);
      else this.logger.error({ err: error.message }, 'candidate fingerprint refused');
    }
  }

  private stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
  }

  private async deleteRows(): Promise<void> {
    await this.call('pc_aps_withdraw_candidate', { candidate_id: this.candidateId }).catch((error: Error) =>
      this.logger.warn({ err: error.message }, 'candidate fingerprint withdrawal failed'),
    );
  }

  /** Stops the refresh and removes the rows, after a refresh in flight (it could register again). */
  async withdraw(): Promise<void> {
    this.stop();
    await this.refreshing;
    await this.deleteRows();
  }
}
