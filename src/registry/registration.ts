/**
 * Family registrations: what a deployment declares in code (a families module whose default
 * export is a list of these). One binding per family. Validated at start-up (A15).
 */
import fs from 'node:fs';
import path from 'node:path';
import { cronProblem, isValidTimezone } from '../schedule/cron.ts';
import { INTERVAL_MAX_SECONDS, MAX_WORKERS_MAX, TIMER_MAX_SECONDS } from '../schedule/limits.ts';
import { isFamilyName } from '../store/identifiers.ts';

export type SchedulePolicyDecl = { kind: 'off' } | { kind: 'interval'; seconds: number } | { kind: 'cron'; expression: string; timezone: string };

export interface ProviderContext {
  bindingName: string;
  family: string;
  /** Aborted when the discovery deadline passes or the supervisor stops. */
  signal: AbortSignal;
  /** Upper bound of keys the provider may re-mark in this call. */
  limit: number;
  /** Marks a scope dirty (pc_aps_mark_dirty): the provider's only write. */
  markDirty(scopeId: string): Promise<void>;
  /**
   * One read of the family's own domain tables (bound parameters) on a connection the database
   * refuses writes on (ReadOnlyError); bounded by the discovery deadline and cancelled with it.
   */
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
  /**
   * Other POWERCONTEXT_SERVER_RUNTIME_* variables the family's processor reads (names without the
   * prefix, e.g. TOPIC_MEMORY_WINDOW_LIMIT), so start-up does not report them as unknown.
   */
  settings?: string[];
}

export class RegistrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegistrationError';
  }
}

const BINDING = /^[a-z][a-z0-9_.:-]{0,127}$/;
const PREFIX = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;
/** Prefixes that name runtime-wide settings and compatibility aliases, never a family. */
const RESERVED_PREFIXES = new Set(['ARTIFACT_PROCESSING']);

/** tsx resolves a `.js` specifier to its `.ts` source; accept either form of an existing file. */
function moduleExists(file: string): boolean {
  if (fs.existsSync(file)) return fs.statSync(file).isFile();
  const ts = file.replace(/\.(m|c)?js$/, (_m, k: string | undefined) => `.${k ?? ''}ts`);
  return ts !== file && fs.existsSync(ts) && fs.statSync(ts).isFile();
}

/** Validates a list of registrations and resolves processor module paths against baseDir. */
export function validateRegistrations(list: unknown, baseDir: string, options: { requireProcessors?: boolean } = {}): FamilyRegistration[] {
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
    if (typeof r.family !== 'string' || !isFamilyName(r.family))
      throw new RegistrationError(`${where}: family must be canonical kebab-case (e.g. topic-memory)`);
    if (typeof r.configPrefix !== 'string' || !PREFIX.test(r.configPrefix))
      throw new RegistrationError(`${where}: configPrefix must be UPPER_SNAKE_CASE (e.g. TOPIC_MEMORY)`);
    const expectedPrefix = r.family.toUpperCase().replace(/-/g, '_');
    if (r.configPrefix !== expectedPrefix)
      throw new RegistrationError(`${where}: configPrefix ${r.configPrefix} does not match family ${r.family}; it must be ${expectedPrefix}`);
    if (RESERVED_PREFIXES.has(r.configPrefix)) throw new RegistrationError(`${where}: configPrefix ${r.configPrefix} is reserved for runtime-wide settings`);
    if (bindings.has(r.bindingName)) throw new RegistrationError(`${where}: duplicate binding name ${r.bindingName}`);
    if (families.has(r.family)) throw new RegistrationError(`${where}: duplicate family ${r.family} (config prefix ${r.configPrefix}); one binding per family`);
    if (prefixes.has(r.configPrefix)) throw new RegistrationError(`${where}: duplicate config prefix ${r.configPrefix}`);
    bindings.add(r.bindingName);
    families.add(r.family);
    prefixes.add(r.configPrefix);
    if (!r.processor || typeof r.processor.module !== 'string' || r.processor.module.length === 0) {
      throw new RegistrationError(`${where}: processor.module must name the processor module by path`);
    }
    if (r.processor.exportName !== undefined && (typeof r.processor.exportName !== 'string' || r.processor.exportName.length === 0)) {
      throw new RegistrationError(`${where}: processor.exportName must be a non-empty string when given`);
    }
    if (
      r.pendingWork !== undefined &&
      (r.pendingWork === null ||
        typeof r.pendingWork !== 'object' ||
        (r.pendingWork.remarkDirty !== undefined && typeof r.pendingWork.remarkDirty !== 'function'))
    ) {
      throw new RegistrationError(`${where}: pendingWork.remarkDirty must be a function when given`);
    }
    if (r.defaults !== undefined) {
      const d = r.defaults;
      if (d === null || typeof d !== 'object') throw new RegistrationError(`${where}: defaults must be an object`);
      if (d.maxWorkers !== undefined && !(Number.isInteger(d.maxWorkers) && d.maxWorkers > 0 && d.maxWorkers <= MAX_WORKERS_MAX)) {
        throw new RegistrationError(`${where}: defaults.maxWorkers must be a positive integer (at most ${MAX_WORKERS_MAX})`);
      }
      if (
        d.workerTimeoutSeconds !== undefined &&
        !(
          typeof d.workerTimeoutSeconds === 'number' &&
          Number.isFinite(d.workerTimeoutSeconds) &&
          d.workerTimeoutSeconds > 0 &&
          d.workerTimeoutSeconds <= TIMER_MAX_SECONDS
        )
      ) {
        throw new RegistrationError(`${where}: defaults.workerTimeoutSeconds must be a positive finite number (at most ${TIMER_MAX_SECONDS})`);
      }
    }
    const schedule = r.schedule ?? { kind: 'off' };
    if (typeof schedule !== 'object' || !['off', 'interval', 'cron'].includes(schedule.kind))
      throw new RegistrationError(`${where}: schedule.kind must be off, interval or cron`);
    if (schedule.kind === 'interval' && !(Number.isInteger(schedule.seconds) && schedule.seconds > 0 && schedule.seconds <= INTERVAL_MAX_SECONDS)) {
      throw new RegistrationError(`${where}: interval schedule needs a positive integer number of seconds (at most ${INTERVAL_MAX_SECONDS})`);
    }
    if (r.settings !== undefined && !(Array.isArray(r.settings) && r.settings.every((n) => typeof n === 'string' && PREFIX.test(n)))) {
      throw new RegistrationError(`${where}: settings must list UPPER_SNAKE_CASE variable names without the POWERCONTEXT_SERVER_RUNTIME_ prefix`);
    }
    if (schedule.kind === 'cron' && (typeof schedule.expression !== 'string' || typeof schedule.timezone !== 'string')) {
      throw new RegistrationError(`${where}: cron schedule needs expression and timezone`);
    }
    if (schedule.kind === 'cron') {
      if (!isValidTimezone(schedule.timezone))
        throw new RegistrationError(`${where}: cron schedule timezone ${JSON.stringify(schedule.timezone)} is not a valid IANA time zone`);
      const problem = cronProblem(schedule.expression, schedule.timezone, `${where}: cron schedule expression`);
      if (problem) throw new RegistrationError(problem);
    }
    const module = path.isAbsolute(r.processor.module) ? r.processor.module : path.resolve(baseDir, r.processor.module);
    // A registration without its processor is a missing capability: refuse it at start-up (RFC 1, 10).
    if (options.requireProcessors !== false && !moduleExists(module)) throw new RegistrationError(`${where}: processor module ${module} does not exist`);
    return { ...r, schedule, processor: { ...r.processor, module } };
  });
}
