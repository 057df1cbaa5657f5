/**
 * Every deployment-wide POWERCONTEXT_SERVER_RUNTIME_* setting, in one table composed into one zod
 * schema and read once at start-up (A15): the runtime, the durable tasks and the observability
 * endpoint take their values from `readSettings`; `apsup run --help` and the unknown-variable
 * report list the same table. Per-family settings (`<PREFIX>_MAX_WORKERS`, ...) are
 * FAMILY_FIELDS in runtime-config.ts, resolved against the registry.
 *
 * Adding a setting is one entry below (name without the prefix, group, doc, default, schema);
 * its value is then `readSettings(env).<NAME>`, typed by the schema.
 */
import * as z from 'zod';
import { DATABASE_URL_VARIABLE, DEFAULT_DATABASE_URL, parseDatabaseUrl } from './database-url.ts';
import { ConfigError } from './database-url.ts';
import { LEASE_TTL_MAX_SECONDS, MAX_WORKERS_MAX, TIMER_MAX_SECONDS, decimal } from './numbers.ts';
import { listenAddress, observabilityAddress } from './observability-address.ts';
import { parseSqliteSynchronous } from '../store/sqlite/synchronous.ts';
import { NOTIFY_REDIS_URL_VARIABLE, parseNotifyConfig } from '../notify/config.ts';
import { DEFAULT_TRUSTED_PRINCIPAL_ID, trustedPrincipalId } from './trusted-principal.ts';

export const ENV_PREFIX = 'POWERCONTEXT_SERVER_RUNTIME_';
/** Task timeouts are not bounded by one Node timer (setLongTimeout chains them): ten years. */
const TASK_TIMEOUT_MAX_SECONDS = 10 * 365 * 86_400;

export interface SettingDef<T = unknown> {
  group: 'runtime' | 'tuning' | 'tasks' | 'observability';
  doc: string;
  /** The default as an operator would write it (parsed by the same schema); undefined: none or derived. */
  default?: string;
  /** For help: how an undefined default is derived. */
  defaultDoc?: string;
  /** Blank text counts as unset (default true); false: blank is parsed (and refused by the schema). */
  blankIsUnset?: boolean;
  /** A secret: an error names the variable, never its value. */
  secret?: boolean;
  schema: z.ZodType<T, string | undefined>;
}

const def = <T>(d: SettingDef<T>): SettingDef<T> => d;
const num = (bounds: Parameters<typeof decimal>[0]) => decimal(bounds) as unknown as z.ZodType<number, string | undefined>;
const text = z.string().trim().min(1, 'must not be empty');
const optionalText = text.optional() as z.ZodType<string | undefined, string | undefined>;

/** The table. Tuning names keep their legacy ARTIFACT_PROCESSING_ prefix (RFC 11). */
export const SETTINGS = {
  DATABASE_URL: def({
    group: 'runtime',
    doc: 'sqlite:<path> | mysql://user:pass@host:port/db | oceanbase://...',
    default: DEFAULT_DATABASE_URL,
    blankIsUnset: false,
    schema: z.string().transform((v) => parseDatabaseUrl(v, DATABASE_URL_VARIABLE)),
  }),
  PROCESSOR_DATABASE_URL: def({
    group: 'runtime',
    doc: 'MySQL/OceanBase: the account of processors\' and task handlers\' commits (README "Database accounts"); same host and database',
    defaultDoc: 'the derived processor account of `apsup db accounts`, else DATABASE_URL',
    schema: optionalText,
  }),
  READER_DATABASE_URL: def({
    group: 'runtime',
    doc: "MySQL/OceanBase: the account of processors' and task handlers' read handles (SELECT on business tables only)",
    defaultDoc: 'the derived reader account of `apsup db accounts`, else DATABASE_URL',
    schema: optionalText,
  }),
  ARTIFACT_PROCESSING_SUPERVISOR_MODE: def({
    group: 'runtime',
    doc: 'global | dedicated (RFC 9; the database records one mode)',
    default: 'global',
    schema: z.enum(['global', 'dedicated'], { message: 'must be global or dedicated' }),
  }),
  ARTIFACT_PROCESSING_ROLE: def({
    group: 'runtime',
    doc: 'all | api | background (RFC 8; SQLite: all only)',
    default: 'all',
    schema: z.enum(['all', 'api', 'background'], { message: 'must be all, api or background' }),
  }),
  SQLITE_SYNCHRONOUS: def({
    group: 'runtime',
    doc: 'NORMAL | FULL: SQLite durability (NORMAL survives a process crash, FULL also a power loss)',
    default: 'NORMAL',
    schema: z.string().transform((v) => parseSqliteSynchronous(v)),
  }),
  NOTIFY_REDIS_URL: def({
    group: 'runtime',
    doc: 'redis://host:port/db of the optional wake-up channel (MySQL/OceanBase), or off',
    default: 'off',
    schema: z.string().transform((v) => parseNotifyConfig({ [NOTIFY_REDIS_URL_VARIABLE]: v })),
  }),
  TRUSTED_PRINCIPAL_ID: def({
    group: 'runtime',
    doc: "the trusted background principal processors receive as ctx.principal.id (RFC 6; {family}: the family's name)",
    default: DEFAULT_TRUSTED_PRINCIPAL_ID,
    schema: trustedPrincipalId,
  }),
  FAMILIES_MODULE: def({ group: 'runtime', doc: 'the families module (run requires it, or --families)', schema: optionalText }),
  TASKS_MODULE: def({ group: 'tasks', doc: 'the durable task handlers module', defaultDoc: 'the reference task module', schema: optionalText }),
  OBSERVABILITY_ADDRESS: def({
    group: 'observability',
    doc: 'host:port of GET /metrics, /healthz, /readyz, or off',
    default: '127.0.0.1:9464',
    blankIsUnset: false,
    schema: observabilityAddress,
  }),
  CONSOLE_ADDRESS: def({
    group: 'observability',
    doc: 'host:port of the web console inside apsup run (apsup console --listen), or off',
    default: 'off',
    blankIsUnset: false,
    schema: listenAddress('127.0.0.1:9465, [::1]:9465'),
  }),
  CONSOLE_TOKEN: def({
    group: 'observability',
    doc: "the web console's operator token (16..512 characters; unset: actions refused, reads on loopback only)",
    secret: true,
    schema: z
      .string()
      .min(16, 'must be 16..512 characters (a secret, e.g. openssl rand -hex 24)')
      .max(512, 'must be 16..512 characters')
      .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces')
      .optional() as z.ZodType<string | undefined, string | undefined>,
  }),
  ARTIFACT_PROCESSING_LEASE_TTL_SECONDS: def({
    group: 'tuning',
    doc: 'supervisor term lease (MySQL)',
    default: '15',
    schema: num({ min: 1, max: LEASE_TTL_MAX_SECONDS }),
  }),
  ARTIFACT_PROCESSING_RENEW_SECONDS: def({
    group: 'tuning',
    doc: 'term renewal period (< lease TTL)',
    default: '5',
    schema: num({ min: 0.05, max: LEASE_TTL_MAX_SECONDS }),
  }),
  ARTIFACT_PROCESSING_POLL_SECONDS: def({
    group: 'tuning',
    doc: 'scan and discovery poll period',
    default: '5',
    schema: num({ min: 0.05, max: TIMER_MAX_SECONDS }),
  }),
  ARTIFACT_PROCESSING_RETRY_BASE_SECONDS: def({
    group: 'tuning',
    doc: 'first retry backoff (RFC 7)',
    default: '30',
    schema: num({ min: 0.01, max: TIMER_MAX_SECONDS }),
  }),
  ARTIFACT_PROCESSING_RETRY_MAX_SECONDS: def({
    group: 'tuning',
    doc: 'largest retry backoff (>= base)',
    default: '1800',
    schema: num({ min: 0.01, max: TIMER_MAX_SECONDS }),
  }),
  ARTIFACT_PROCESSING_CONFLICT_RETRY_SECONDS: def({
    group: 'tuning',
    doc: 'retry after a conflicting commit',
    default: '2',
    schema: num({ min: 0.01, max: TIMER_MAX_SECONDS }),
  }),
  ARTIFACT_PROCESSING_READY_QUEUE_SIZE: def({
    group: 'tuning',
    doc: 'in-memory ready keys per family',
    default: '64',
    schema: num({ min: 1, max: 100_000, integer: true }),
  }),
  ARTIFACT_PROCESSING_SCAN_PAGE_SIZE: def({
    group: 'tuning',
    doc: 'keys per admission/discovery page',
    default: '500',
    schema: num({ min: 1, max: 5000, integer: true }),
  }),
  ARTIFACT_PROCESSING_TERMINATE_GRACE_SECONDS: def({
    group: 'tuning',
    doc: 'SIGTERM to SIGKILL grace of a worker',
    default: '5',
    schema: num({ min: 0.05, max: TIMER_MAX_SECONDS }),
  }),
  ARTIFACT_PROCESSING_DISCOVERY_TIMEOUT_SECONDS: def({
    group: 'tuning',
    doc: 'bound of one provider discovery',
    default: '10',
    schema: num({ min: 0.05, max: TIMER_MAX_SECONDS }),
  }),
  ARTIFACT_PROCESSING_WARM_WORKERS: def({
    group: 'tuning',
    doc: 'idle workers per family started ahead of need (0: on demand)',
    default: '1',
    schema: num({ min: 0, max: MAX_WORKERS_MAX, integer: true }),
  }),
  DURABLE_TASK_MAX_TIMEOUT_SECONDS: def({
    group: 'tasks',
    doc: 'largest task timeout (beyond the Node timer range: the runner chains timers)',
    default: String(26 * 3600),
    schema: num({ max: TASK_TIMEOUT_MAX_SECONDS }),
  }),
  DURABLE_TASK_DEFAULT_TIMEOUT_SECONDS: def({
    group: 'tasks',
    doc: 'timeout of a task that sets none (<= max)',
    defaultDoc: 'DURABLE_TASK_MAX_TIMEOUT_SECONDS',
    schema: num({ max: TASK_TIMEOUT_MAX_SECONDS }).optional() as z.ZodType<number | undefined, string | undefined>,
  }),
  DURABLE_TASK_LEASE_SECONDS: def({ group: 'tasks', doc: 'attempt lease', default: '30', schema: num({ min: 1, max: 3600 }) }),
  DURABLE_TASK_CAPACITY: def({ group: 'tasks', doc: 'attempts this process runs at once', default: '4', schema: num({ integer: true, max: 10_000 }) }),
  DURABLE_TASK_SWEEP_SECONDS: def({ group: 'tasks', doc: 'expired-attempt sweep period', default: '30', schema: num({ min: 0.1, max: 86_400 }) }),
  DURABLE_TASK_READINESS_TTL_SECONDS: def({ group: 'tasks', doc: 'worker readiness publication TTL', default: '15', schema: num({ min: 1, max: 600 }) }),
  DURABLE_TASK_TERMINATE_GRACE_SECONDS: def({
    group: 'tasks',
    doc: 'SIGTERM to SIGKILL grace of an attempt',
    default: '5',
    schema: num({ min: 0.1, max: 600 }),
  }),
  DURABLE_TASK_PROGRESS_MIN_STEP: def({ group: 'tasks', doc: 'smallest progress change written', default: '1', schema: num({ max: Number.MAX_SAFE_INTEGER }) }),
  DURABLE_TASK_WAKEUP_POLL_MS: def({ group: 'tasks', doc: 'pending-work probe period (MySQL)', default: '500', schema: num({ min: 50, max: 60_000 }) }),
  DURABLE_TASK_MAX_ATTEMPTS: def({
    group: 'tasks',
    doc: 'attempts of an idempotent task through requeues',
    default: '3',
    schema: num({ integer: true, max: 1000 }),
  }),
  DURABLE_TASK_FAILURE_HOOK_MAX_ATTEMPTS: def({
    group: 'tasks',
    doc: 'failed convergences before failing without the hook',
    default: '5',
    schema: num({ integer: true, max: 1000 }),
  }),
  DURABLE_TASK_WORKER_MAX_ATTEMPTS: def({
    group: 'tasks',
    doc: 'attempts one warm task worker process runs before it retires (1: a process per attempt)',
    defaultDoc: '10000 with DURABLE_TASK_MODULE_ISOLATION=process, 100 with attempt (module instances are never freed)',
    schema: num({ integer: true, min: 1, max: 1_000_000 }).optional() as z.ZodType<number | undefined, string | undefined>,
  }),
  DURABLE_TASK_WARM_WORKERS: def({
    group: 'tasks',
    doc: 'task worker processes started ahead of need, and at most started at once when work arrives (<= CAPACITY; 0: none ahead of need)',
    defaultDoc: 'DURABLE_TASK_CAPACITY',
    schema: num({ integer: true, min: 0, max: 10_000 }).optional() as z.ZodType<number | undefined, string | undefined>,
  }),
  DURABLE_TASK_MODULE_ISOLATION: def({
    group: 'tasks',
    doc: 'process: a warm task worker keeps its registry and handler modules (re-imported when their file changes) | attempt: fresh module instances per attempt',
    default: 'process',
    schema: z.enum(['process', 'attempt'], { message: 'must be process or attempt' }),
  }),
  DURABLE_TASK_FAILURE_HOOK_TIMEOUT_SECONDS: def({
    group: 'tasks',
    doc: 'bound of one convergence transaction',
    default: '10',
    schema: num({ min: 0.1, max: 3600 }),
  }),
} satisfies Record<string, SettingDef>;

export type SettingName = keyof typeof SETTINGS;
export type Settings = { [K in SettingName]: (typeof SETTINGS)[K] extends SettingDef<infer T> ? T : never };

export const variableOf = (name: string): string => `${ENV_PREFIX}${name}`;

function input(d: SettingDef, raw: unknown): string | undefined {
  if (typeof raw !== 'string') return d.default;
  if ((d.blankIsUnset ?? true) && raw.trim() === '') return d.default;
  return (d.blankIsUnset ?? true) ? raw.trim() : raw;
}

/** The one schema: the environment in, every setting parsed (or the first problem, naming its variable). */
export const settingsSchema = z.object(
  Object.fromEntries(
    Object.entries(SETTINGS).map(([name, d]) => [variableOf(name), z.preprocess((raw) => input(d as SettingDef, raw), (d as SettingDef).schema as z.ZodType)]),
  ),
);

type Env = Record<string, string | undefined>;

/** The value an error message repeats: never a secret's. */
function shown(variable: string, value: string | undefined): string {
  const d = (SETTINGS as Record<string, SettingDef>)[variable.slice(ENV_PREFIX.length)];
  return d?.secret ? ' (value not shown)' : ` (got ${JSON.stringify(value ?? '')})`;
}
/** Every setting of `env`, validated (the start-up reads it once and passes the result on). */
export function readSettings(env: Env = process.env): Settings {
  const result = settingsSchema.safeParse(env);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const variable = String(issue.path[0] ?? ENV_PREFIX);
    throw new ConfigError(`${variable} ${issue.message}${shown(variable, env[variable])}`);
  }
  const out = {} as Record<string, unknown>;
  for (const name of Object.keys(SETTINGS)) out[name] = (result.data as Record<string, unknown>)[variableOf(name)];
  return out as Settings;
}

/**
 * One setting of `env`, parsed by its entry of the table (the same default, blank rule, schema and
 * message as readSettings): for commands that need only it (`apsup migrate`, `maintenance`, ...)
 * and must not fail on another setting they never use.
 */
export function readSetting<K extends SettingName>(name: K, env: Env = process.env): Settings[K] {
  const d = SETTINGS[name] as SettingDef;
  const variable = variableOf(name);
  const result = d.schema.safeParse(input(d, env[variable]));
  if (!result.success) throw new ConfigError(`${variable} ${result.error.issues[0]!.message}${shown(variable, env[variable])}`);
  return result.data as Settings[K];
}

/** The table as `run --help` prints it. */
export function describeSettings(): string {
  const rows = Object.entries(SETTINGS).map(([name, d]: [string, SettingDef]) => {
    const dflt = d.default !== undefined ? d.default : d.defaultDoc ? `(${d.defaultDoc})` : '(none)';
    return { variable: variableOf(name), dflt, doc: d.doc, group: d.group };
  });
  const width = Math.max(...rows.map((r) => r.variable.length));
  const lines: string[] = [];
  for (const group of ['runtime', 'tuning', 'tasks', 'observability'] as const) {
    lines.push(`  ${group}:`);
    for (const r of rows.filter((x) => x.group === group)) lines.push(`    ${r.variable.padEnd(width)}  default ${r.dflt}  ${r.doc}`);
  }
  return lines.join('\n');
}
