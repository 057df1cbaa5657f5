/**
 * A runtime start records its fingerprint per supervisor key and is refused when a live
 * candidate of the key runs with another one (RFC 8, 10): pc_aps_register_candidate, kept live
 * with pc_aps_refresh_candidate (MySQL/OceanBase, every renewal period; SQLite: one host, no
 * idle polling) and removed with pc_aps_withdraw_candidate at shutdown.
 */
import crypto from 'node:crypto';
import { ConfigError } from '../config/database-url.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { Logger } from '../logging.ts';
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
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    private readonly config: RuntimeConfig,
    private readonly logger: Logger,
  ) {}

  private call(op: 'pc_aps_register_candidate' | 'pc_aps_refresh_candidate' | 'pc_aps_withdraw_candidate', params: Record<string, unknown>) {
    return (this.store as BaseStore).callOperation(op, params as never).then((sets) => sets[sets.length - 1] ?? []);
  }

  /** Registers every key of the mode; throws FingerprintMismatchError naming the first difference. */
  async register(): Promise<void> {
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
      await this.withdraw();
      const what = diff ? `first difference: ${diff.path} is ${diff.mine} here, ${diff.theirs} there` : 'their fingerprints differ';
      throw new FingerprintMismatchError(
        `refusing to start: supervisor key ${fp.supervisorKey} has a live candidate ${String(row.candidate_id)} (role ${String(row.role)}) that runs with another configuration; ${what}. Every process of a deployment must use the same families module and schedule, budget and timeout settings (RFC 10)`,
      );
    }
    this.logger.info({ candidateId: this.candidateId, keys: fingerprintsOf(this.config).map((f) => f.supervisorKey) }, 'candidate fingerprint registered');
    // SQLite: one host (the host lock), rows never expire; no periodic statement while idle.
    if (this.config.database.backend !== 'sqlite') {
      const keys = fingerprintsOf(this.config).length;
      this.timer = setInterval(() => {
        this.call('pc_aps_refresh_candidate', { candidate_id: this.candidateId, ttl_ms: this.config.leaseTtlMs })
          .then(([row]) => {
            // Expired (a pause past the TTL): another configuration may have started meanwhile.
            if (Number(row?.live_keys ?? 0) < keys)
              this.logger.error(
                { candidateId: this.candidateId, liveKeys: Number(row?.live_keys ?? 0), keys },
                'candidate fingerprint expired; restart this process to compare it with the live candidates again',
              );
          })
          .catch((error: Error) => this.logger.warn({ err: error.message }, 'candidate fingerprint refresh failed'));
      }, this.config.renewEveryMs);
      this.timer.unref();
    }
  }

  async withdraw(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.call('pc_aps_withdraw_candidate', { candidate_id: this.candidateId }).catch((error: Error) =>
      this.logger.warn({ err: error.message }, 'candidate fingerprint withdrawal failed'),
    );
  }
}
