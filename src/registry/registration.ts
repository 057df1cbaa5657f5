/**
 * Family registrations: what a deployment declares in code (a families module whose default
 * export is a list of these). One binding per family. Validated at start-up (A15).
 */
import path from 'node:path';
import { isFamilyName } from '../store/identifiers.ts';

export type SchedulePolicyDecl =
  | { kind: 'off' }
  | { kind: 'interval'; seconds: number }
  | { kind: 'cron'; expression: string; timezone: string };

export interface ProviderContext {
  bindingName: string;
  family: string;
  /** Aborted when the discovery deadline passes or the supervisor stops. */
  signal: AbortSignal;
  /** Upper bound of keys the provider may re-mark in this call. */
  limit: number;
  /** Marks a scope dirty (pc_aps_mark_dirty). */
  markDirty(scopeId: string): Promise<void>;
  /** One bounded read of the family's own domain tables (bound parameters). */
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
}

/**
 * Pending-work provider: bounded, cancellable calibration of dirty marks from domain facts
 * (RFC 1 and 11: a scope whose domain progress shows work but has no dirty mark is re-marked).
 * It runs in the supervisor process; it must not read artifact contents or call models.
 */
export interface PendingWorkProvider {
  remarkDirty?(ctx: ProviderContext): Promise<number>;
}

export interface FamilyRegistration {
  /** Globally unique, stable processor registration id the supervisor dispatches by. */
  bindingName: string;
  /** Canonical kebab-case family name (budget, schedule, dedicated ownership). */
  family: string;
  /** UPPER_SNAKE configuration prefix: POWERCONTEXT_SERVER_RUNTIME_<PREFIX>_*. */
  configPrefix: string;
  /** Default schedule policy; configuration may change it. */
  schedule: SchedulePolicyDecl;
  /** Module path (absolute, or relative to the families module) exporting the processor. */
  processor: { module: string; exportName?: string };
  pendingWork?: PendingWorkProvider;
  defaults?: { maxWorkers?: number; workerTimeoutSeconds?: number };
}

export class RegistrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegistrationError';
  }
}

const BINDING = /^[a-z][a-z0-9_.:-]{0,127}$/;
const PREFIX = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;

/** Validates a list of registrations and resolves processor module paths against baseDir. */
export function validateRegistrations(list: unknown, baseDir: string): FamilyRegistration[] {
  if (!Array.isArray(list) || list.length === 0) {
    throw new RegistrationError('the families module must default-export a non-empty array of family registrations');
  }
  const bindings = new Set<string>();
  const families = new Set<string>();
  const prefixes = new Set<string>();
  return list.map((raw, index) => {
    const r = raw as FamilyRegistration;
    const where = `registration #${index + 1}${r && typeof r.family === 'string' ? ` (${r.family})` : ''}`;
    if (!r || typeof r !== 'object') throw new RegistrationError(`${where} is not an object`);
    if (typeof r.bindingName !== 'string' || !BINDING.test(r.bindingName)) throw new RegistrationError(`${where}: bindingName must match ${BINDING}`);
    if (typeof r.family !== 'string' || !isFamilyName(r.family)) throw new RegistrationError(`${where}: family must be canonical kebab-case (e.g. topic-memory)`);
    if (typeof r.configPrefix !== 'string' || !PREFIX.test(r.configPrefix)) throw new RegistrationError(`${where}: configPrefix must be UPPER_SNAKE_CASE (e.g. TOPIC_MEMORY)`);
    const expectedPrefix = r.family.toUpperCase().replace(/-/g, '_');
    if (r.configPrefix !== expectedPrefix) throw new RegistrationError(`${where}: configPrefix must be ${expectedPrefix} for family ${r.family}`);
    if (bindings.has(r.bindingName)) throw new RegistrationError(`duplicate binding name ${r.bindingName}`);
    if (families.has(r.family)) throw new RegistrationError(`duplicate family ${r.family} (one binding per family)`);
    if (prefixes.has(r.configPrefix)) throw new RegistrationError(`duplicate config prefix ${r.configPrefix}`);
    bindings.add(r.bindingName);
    families.add(r.family);
    prefixes.add(r.configPrefix);
    if (!r.processor || typeof r.processor.module !== 'string' || r.processor.module.length === 0) {
      throw new RegistrationError(`${where}: processor.module must name the processor module by path`);
    }
    const schedule = r.schedule ?? { kind: 'off' };
    if (!['off', 'interval', 'cron'].includes(schedule.kind)) throw new RegistrationError(`${where}: schedule.kind must be off, interval or cron`);
    if (schedule.kind === 'interval' && !(Number.isInteger(schedule.seconds) && schedule.seconds > 0)) {
      throw new RegistrationError(`${where}: interval schedule needs a positive integer number of seconds`);
    }
    if (schedule.kind === 'cron' && (typeof schedule.expression !== 'string' || typeof schedule.timezone !== 'string')) {
      throw new RegistrationError(`${where}: cron schedule needs expression and timezone`);
    }
    const module = path.isAbsolute(r.processor.module) ? r.processor.module : path.resolve(baseDir, r.processor.module);
    return { ...r, schedule, processor: { ...r.processor, module } };
  });
}
