/**
 * Runtime configuration from POWERCONTEXT_SERVER_RUNTIME_* (RFC sections 10 and 11), validated
 * with zod at start-up against the family registry. Every error names the variable (A15).
 */
import * as z from 'zod';
import type { FamilyRegistration, SchedulePolicyDecl } from '../registry/registration.ts';
import { BUILTIN_PREFIXES, resolveSchedule } from './family-schedule.ts';
export { BUILTIN_PREFIXES, ENV_PREFIX };
import { ConfigError, type DatabaseTarget } from './database-url.ts';
import { unknownVariables, type UnknownVariable } from './known-variables.ts';
import { INTERVAL_MAX_SECONDS, MAX_WORKERS_MAX, TIMER_MAX_SECONDS, decimal } from './numbers.ts';
import { ENV_PREFIX, SETTINGS, readSettings, type Settings } from './settings.ts';
import type { SqliteSynchronous } from '../store/sqlite/synchronous.ts';

export const MODE_VARIABLE = `${ENV_PREFIX}ARTIFACT_PROCESSING_SUPERVISOR_MODE`;
export const ROLE_VARIABLE = `${ENV_PREFIX}ARTIFACT_PROCESSING_ROLE`;
export const FAMILIES_MODULE_VARIABLE = `${ENV_PREFIX}FAMILIES_MODULE`;

export type Mode = 'global' | 'dedicated';
export type Role = 'all' | 'api' | 'background';

const FAMILY_FIELDS = ['SCHEDULE_SECONDS', 'CRON', 'TIMEZONE', 'SCHEDULE_ENABLED', 'MAX_WORKERS', 'WORKER_TIMEOUT_SECONDS'] as const;
type FamilyField = (typeof FAMILY_FIELDS)[number];

/** Section 11: each alias maps to exactly one new field. */
export const ALIASES: Array<{ alias: string; prefix: string; field: FamilyField }> = [
  { alias: 'SCHEDULE_SECONDS', prefix: 'MEMORY', field: 'SCHEDULE_SECONDS' },
  { alias: 'PROFILE_MAX_CONCURRENCY', prefix: 'PROFILE', field: 'MAX_WORKERS' },
  { alias: 'ARTIFACT_PROCESSING_MAX_WORKERS', prefix: 'TOPIC_MEMORY', field: 'MAX_WORKERS' },
  { alias: 'ARTIFACT_PROCESSING_WORKER_TIMEOUT_SECONDS', prefix: 'TOPIC_MEMORY', field: 'WORKER_TIMEOUT_SECONDS' },
];

export interface FamilyConfig {
  registration: FamilyRegistration;
  schedule: SchedulePolicyDecl;
  maxWorkers: number;
  workerTimeoutMs: number;
  /** Variables read for this family, with the alias that supplied a value where one did. */
  sources: Record<string, string>;
}

export interface RuntimeConfig {
  mode: Mode;
  role: Role;
  database: DatabaseTarget;
  /** SQLite PRAGMA synchronous (SQLITE_SYNCHRONOUS, NORMAL or FULL); every SQLite open reads the same variable. */
  sqliteSynchronous: SqliteSynchronous;
  leaseTtlMs: number;
  renewEveryMs: number;
  pollEveryMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  conflictRetryMs: number;
  readyQueueSize: number;
  scanPageSize: number;
  terminateGraceMs: number;
  discoveryTimeoutMs: number;
  /** Idle worker processes per family started at start-up (capped by each family's budget). */
  warmWorkers: number;
  /** The trusted background principal's id, `{family}` standing for the family (TRUSTED_PRINCIPAL_ID; RFC 6, A13/A14). */
  trustedPrincipalId: string;
  families: FamilyConfig[];
  aliasesUsed: Array<{ alias: string; target: string }>;
  /** POWERCONTEXT_SERVER_RUNTIME_* variables nothing reads (logged as warnings at start-up). */
  unknownVariables: UnknownVariable[];
}

const positiveInt = decimal({ integer: true, max: Number.MAX_SAFE_INTEGER });
const workers = decimal({ integer: true, max: MAX_WORKERS_MAX });
const timeoutSeconds = decimal({ integer: true, max: TIMER_MAX_SECONDS });
const intervalSeconds = decimal({ integer: true, max: INTERVAL_MAX_SECONDS });
const bool = z.enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' }).transform((v) => v === 'true' || v === '1' || v === 'yes');

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const v = env[`${ENV_PREFIX}${name}`];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function parseWith<T>(schema: z.ZodType<T>, value: string, variable: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new ConfigError(`${variable} ${result.error.issues[0]?.message ?? 'is invalid'} (got ${JSON.stringify(value)})`);
  return result.data;
}

/** Alias and new variable agree when they are the same text or, for numbers, the same value ("4" and "4.0"). */
function sameSetting(a: string, b: string): boolean {
  if (a === b) return true;
  const x = Number(a);
  const y = Number(b);
  return a !== '' && b !== '' && Number.isFinite(x) && Number.isFinite(y) && x === y;
}

/** The runtime part of the one configuration: deployment settings (settings.ts) and the families'. */
export function parseRuntimeConfig(env: Env, registrations: FamilyRegistration[], settings: Settings = readSettings(env)): RuntimeConfig {
  const mode = settings.ARTIFACT_PROCESSING_SUPERVISOR_MODE;
  const role = settings.ARTIFACT_PROCESSING_ROLE;
  const database = settings.DATABASE_URL;
  const sqliteSynchronous = settings.SQLITE_SYNCHRONOUS;
  if (database.backend === 'sqlite' && role !== 'all') {
    throw new ConfigError(`${ROLE_VARIABLE}=${role} is not supported on SQLite: the embedded backend runs one host process with role all`);
  }
  const t = (key: string) => settings[`ARTIFACT_PROCESSING_${key}` as keyof Settings] as number;
  if (t('RENEW_SECONDS') >= t('LEASE_TTL_SECONDS')) {
    throw new ConfigError(`${ENV_PREFIX}ARTIFACT_PROCESSING_RENEW_SECONDS must be shorter than ${ENV_PREFIX}ARTIFACT_PROCESSING_LEASE_TTL_SECONDS`);
  }
  if (t('RETRY_MAX_SECONDS') < t('RETRY_BASE_SECONDS')) {
    throw new ConfigError(`${ENV_PREFIX}ARTIFACT_PROCESSING_RETRY_MAX_SECONDS must not be below ${ENV_PREFIX}ARTIFACT_PROCESSING_RETRY_BASE_SECONDS`);
  }
  const ms = (key: string) => Math.round(t(key) * 1000);

  // Resolve aliases: alias -> one new field; both set with different values fails.
  const values = new Map<string, { value: string; source: string }>();
  const aliasesUsed: Array<{ alias: string; target: string }> = [];
  for (const prefix of new Set([...BUILTIN_PREFIXES, ...registrations.map((r) => r.configPrefix)])) {
    for (const field of FAMILY_FIELDS) {
      const v = read(env, `${prefix}_${field}`);
      if (v !== undefined) values.set(`${prefix}_${field}`, { value: v, source: `${ENV_PREFIX}${prefix}_${field}` });
    }
  }
  for (const { alias, prefix, field } of ALIASES) {
    const v = read(env, alias);
    if (v === undefined) continue;
    const target = `${prefix}_${field}`;
    const existing = values.get(target);
    if (existing && !sameSetting(existing.value, v)) {
      throw new ConfigError(
        `${ENV_PREFIX}${alias} (compatibility alias of ${ENV_PREFIX}${target}) is ${JSON.stringify(v)} but ${ENV_PREFIX}${target} is ${JSON.stringify(existing.value)}: set only one, or the same value`,
      );
    }
    if (!existing) values.set(target, { value: v, source: `${ENV_PREFIX}${alias}` });
    aliasesUsed.push({ alias: `${ENV_PREFIX}${alias}`, target: `${ENV_PREFIX}${target}` });
  }

  // A setting for a family without a registered processor is an error, not ignored; this
  // includes an alias whose target family is not registered.
  const registeredPrefixes = new Set(registrations.map((r) => r.configPrefix));
  for (const { alias, prefix } of ALIASES) {
    if (read(env, alias) !== undefined && !registeredPrefixes.has(prefix)) {
      throw new ConfigError(`${ENV_PREFIX}${alias} configures family prefix ${prefix}, but no processor is registered for it`);
    }
  }
  // Unknown family-shaped variables with an unregistered prefix are rejected too.
  for (const name of Object.keys(env)) {
    if (!name.startsWith(ENV_PREFIX) || env[name] === undefined || env[name]!.trim() === '') continue;
    const rest = name.slice(ENV_PREFIX.length);
    const field = FAMILY_FIELDS.find((f) => rest.endsWith(`_${f}`));
    if (!field) continue;
    const prefix = rest.slice(0, rest.length - field.length - 1);
    if (ALIASES.some((a) => a.alias === rest)) continue;
    if (prefix === 'ARTIFACT_PROCESSING') {
      // Only the two compatibility aliases live here; there is no deployment-wide schedule.
      throw new ConfigError(`${name} is not a setting: schedules are configured per family (${ENV_PREFIX}<PREFIX>_${field})`);
    }
    if (!registeredPrefixes.has(prefix)) {
      throw new ConfigError(`${name} configures family prefix ${prefix}, but no processor is registered for it`);
    }
  }

  const families = registrations.map((registration): FamilyConfig => {
    const p = registration.configPrefix;
    const get = (field: FamilyField) => values.get(`${p}_${field}`);
    const sources: Record<string, string> = {};
    const note = (field: FamilyField) => {
      const v = get(field);
      if (v) sources[field] = v.source;
      return v;
    };
    const seconds = note('SCHEDULE_SECONDS');
    const cron = note('CRON');
    const tz = note('TIMEZONE');
    const enabled = note('SCHEDULE_ENABLED');
    const maxWorkersRaw = note('MAX_WORKERS');
    const timeoutRaw = note('WORKER_TIMEOUT_SECONDS');

    const schedule = resolveSchedule(
      registration,
      { seconds, cron, tz, enabled },
      {
        seconds: (v, variable) => parseWith(intervalSeconds, v, variable),
        bool: (v, variable) => parseWith(bool, v, variable),
      },
    );
    const maxWorkers = maxWorkersRaw ? parseWith(workers, maxWorkersRaw.value, maxWorkersRaw.source) : (registration.defaults?.maxWorkers ?? 2);
    const timeout = timeoutRaw ? parseWith(timeoutSeconds, timeoutRaw.value, timeoutRaw.source) : (registration.defaults?.workerTimeoutSeconds ?? 600);
    return { registration, schedule, maxWorkers, workerTimeoutMs: Math.round(timeout * 1000), sources };
  });

  return {
    mode,
    role,
    database,
    sqliteSynchronous,
    leaseTtlMs: ms('LEASE_TTL_SECONDS'),
    renewEveryMs: ms('RENEW_SECONDS'),
    pollEveryMs: ms('POLL_SECONDS'),
    retryBaseMs: ms('RETRY_BASE_SECONDS'),
    retryMaxMs: ms('RETRY_MAX_SECONDS'),
    conflictRetryMs: ms('CONFLICT_RETRY_SECONDS'),
    readyQueueSize: t('READY_QUEUE_SIZE'),
    scanPageSize: t('SCAN_PAGE_SIZE'),
    terminateGraceMs: ms('TERMINATE_GRACE_SECONDS'),
    discoveryTimeoutMs: ms('DISCOVERY_TIMEOUT_SECONDS'),
    warmWorkers: t('WARM_WORKERS'),
    trustedPrincipalId: settings.TRUSTED_PRINCIPAL_ID,
    families,
    aliasesUsed,
    unknownVariables: unknownVariables(env, ENV_PREFIX, knownSettings(registrations), registrations),
  };
}

/** Variable names (without the prefix) this configuration reads. */
function knownSettings(registrations: FamilyRegistration[]): string[] {
  return [...Object.keys(SETTINGS), ...ALIASES.map((a) => a.alias), ...registrations.flatMap((r) => FAMILY_FIELDS.map((f) => `${r.configPrefix}_${f}`))];
}

/** The effective configuration as it may be logged (no credentials, no connection string). */
export function describeConfig(config: RuntimeConfig): Record<string, unknown> {
  return {
    mode: config.mode,
    role: config.role,
    backend: config.database.backend,
    ...(config.database.backend === 'sqlite' ? { sqliteSynchronous: config.sqliteSynchronous } : {}),
    leaseTtlMs: config.leaseTtlMs,
    renewEveryMs: config.renewEveryMs,
    trustedPrincipalId: config.trustedPrincipalId,
    families: config.families.map((f) => ({
      family: f.registration.family,
      binding: f.registration.bindingName,
      schedule: f.schedule,
      maxWorkers: f.maxWorkers,
      workerTimeoutMs: f.workerTimeoutMs,
    })),
    aliasesUsed: config.aliasesUsed,
  };
}
