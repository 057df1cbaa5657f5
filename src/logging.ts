/**
 * pino JSON logs. Never logged: source text, prompts, model output, credentials, full connection
 * strings. Redaction below is a second line of defence for fields that might carry them.
 */
import pino, { type Logger } from 'pino';

/** Field names whose values are never logged, at the top level and up to two levels deep. */
export const REDACTED_FIELDS = [
  'password', 'databaseUrl', 'connectionString', 'url', 'prompt', 'content', 'output', 'source',
  'token', 'secret', 'apiKey', 'authorization', 'credentials', 'env',
];

const REDACTED = new Set(REDACTED_FIELDS);
const CENSOR = '[redacted]';

/**
 * Replaces the value of every redacted field name at this level and up to `levels` levels below
 * (for levels = 2 the rule of pino redact paths f, *.f and *.*.f; objects and arrays, an array
 * index counting as a level like pino's `*`). Copies only what it changes and returns the input
 * itself when nothing matched, so a clean line costs a few key lookups: measured 6.7 us per line
 * instead of 42 us with the equivalent pino wildcard redact paths, which were a fifth of the
 * supervisor's CPU per invocation on SQLite.
 */
export function scrub(value: unknown, levels: number): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Error || Buffer.isBuffer(value) || value instanceof Date) return value;
  if (Array.isArray(value)) {
    if (levels <= 0) return value;
    let out: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const next = scrub(value[i], levels - 1);
      if (next !== value[i]) (out ??= [...value])[i] = next;
    }
    return out ?? value;
  }
  let out: Record<string, unknown> | null = null;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const current = record[key];
    const next = REDACTED.has(key) ? CENSOR : levels > 0 ? scrub(current, levels - 1) : current;
    if (next !== current) (out ??= { ...record })[key] = next;
  }
  return out ?? value;
}

export function createLogger(options: { level?: string; name?: string; destination?: pino.DestinationStream } = {}): Logger {
  return guardChildren(pino(
    {
      name: options.name ?? 'apsup',
      level: options.level ?? process.env.APSUP_LOG_LEVEL ?? 'info',
      formatters: { log: (object) => scrub(object, 2) as Record<string, unknown> },
      base: { pid: process.pid },
    },
    options.destination,
  ));
}

/** pino does not pass child bindings through the log formatter: scrub them when a child is made. */
function guardChildren(logger: Logger): Logger {
  const child = logger.child.bind(logger);
  logger.child = ((bindings: pino.Bindings, childOptions?: pino.ChildLoggerOptions) =>
    guardChildren(child(scrub(bindings, 2) as pino.Bindings, childOptions))) as unknown as Logger['child'];
  return logger;
}

export type { Logger };
