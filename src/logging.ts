/**
 * pino logs: JSON lines by default (for machines); human-readable through pino-pretty (levels as
 * words, ISO times) on a terminal or with APSUP_LOG_FORMAT=pretty. APSUP_LOG_LEVEL and
 * APSUP_LOG_FORMAT are validated (a wrong value is a configuration error). Never logged: source text, prompts, model output, credentials, full connection
 * strings. Redaction below is a second line of defence for fields that might carry them.
 */
import fs from 'node:fs';
import type pino from 'pino';
import type { Logger } from 'pino';
import { ConfigError } from './config/database-url.ts';
import { requirePackage } from './paths.ts';

/** Field names whose values are never logged, at the top level and up to two levels deep. */
export const REDACTED_FIELDS = [
  'password',
  'databaseUrl',
  'connectionString',
  'url',
  'prompt',
  'content',
  'output',
  'source',
  'token',
  'secret',
  'apiKey',
  'authorization',
  'credentials',
  'env',
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

/**
 * Standard output with group writes: lines written within FLUSH_MS (or until 64 KiB gather) go
 * out in one write instead of one write per line (a busy supervisor logs a line per invocation;
 * one write each was measured at about 60 us of the host's CPU per invocation on SQLite). Lines
 * at warn level and above, and everything pending at exit, are written at once; a timer is armed
 * only while lines are pending, so an idle process does not wake up for it. A process killed with
 * SIGKILL can lose at most the last FLUSH_MS of info lines.
 */
class GroupedStdout {
  private chunks: string[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | null = null;
  /** The unwritten rest of a partial write to a full pipe, written first next time. */
  private rest: Buffer | null = null;
  static readonly FLUSH_MS = 20;
  static readonly MAX_BYTES = 64 * 1024;

  constructor(private readonly fd: number) {
    process.once('exit', () => this.flush());
  }

  write(line: string): boolean {
    this.chunks.push(line);
    this.bytes += line.length;
    const level = /^\{"level":(\d+)/.exec(line);
    if ((level && Number(level[1]) >= 40) || this.bytes >= GroupedStdout.MAX_BYTES) this.flush();
    else this.arm(GroupedStdout.FLUSH_MS);
    return true;
  }

  private arm(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), ms);
    this.timer.unref();
  }

  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.chunks.length === 0 && !this.rest) return;
    const text = Buffer.from(this.chunks.join(''), 'utf8');
    const buffer = this.rest ? Buffer.concat([this.rest, text]) : text;
    this.chunks = [];
    this.bytes = 0;
    this.rest = null;
    let offset = 0;
    while (offset < buffer.length) {
      try {
        offset += fs.writeSync(this.fd, buffer, offset);
      } catch (error) {
        // A full non-blocking pipe (EAGAIN): keep the rest and try again shortly. Anything else
        // (EPIPE: the reader is gone) drops the lines; logging never stops the process.
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          this.rest = buffer.subarray(offset);
          this.arm(5);
        }
        return;
      }
    }
  }
}

let stdoutDestination: pino.DestinationStream | null = null;

export const LOG_LEVEL_VARIABLE = 'APSUP_LOG_LEVEL';
export const LOG_FORMAT_VARIABLE = 'APSUP_LOG_FORMAT';
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogFormat = 'json' | 'pretty';

/** APSUP_LOG_LEVEL (default info), one of LOG_LEVELS. */
export function logLevelOf(env: NodeJS.ProcessEnv = process.env): string {
  const raw = env[LOG_LEVEL_VARIABLE]?.trim().toLowerCase();
  if (!raw) return 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw))
    throw new ConfigError(`${LOG_LEVEL_VARIABLE} must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(env[LOG_LEVEL_VARIABLE])})`);
  return raw;
}

/** APSUP_LOG_FORMAT json | pretty; unset: pretty when standard output is a terminal. */
export function logFormatOf(env: NodeJS.ProcessEnv = process.env, isTty = process.stdout.isTTY === true): LogFormat {
  const raw = env[LOG_FORMAT_VARIABLE]?.trim().toLowerCase();
  if (!raw) return isTty ? 'pretty' : 'json';
  if (raw !== 'json' && raw !== 'pretty')
    throw new ConfigError(`${LOG_FORMAT_VARIABLE} must be json or pretty (got ${JSON.stringify(env[LOG_FORMAT_VARIABLE])})`);
  return raw;
}

function defaultDestination(): pino.DestinationStream {
  if (logFormatOf() === 'json') return new GroupedStdout(1);
  // Synchronous on fd 1: a line is out before the process exits (no worker thread).
  const pretty = requirePackage('pino-pretty') as typeof import('pino-pretty');
  return pretty({
    destination: 1,
    sync: true,
    colorize: process.stdout.isTTY === true,
    translateTime: "UTC:yyyy-mm-dd'T'HH:MM:ss.l'Z'",
    ignore: 'pid,hostname',
    singleLine: true,
  });
}

type LoggerOptions = { level?: string; name?: string; destination?: pino.DestinationStream };

export function createLogger(options: LoggerOptions = {}): Logger {
  // Loaded here, not at import: a worker process that never logs never loads it (createLazyLogger).
  const pino = requirePackage('pino') as typeof import('pino');
  return guardChildren(
    pino(
      {
        name: options.name ?? 'apsup',
        level: options.level ?? logLevelOf(),
        formatters: { log: (object) => scrub(object, 2) as Record<string, unknown> },
        base: { pid: process.pid },
      },
      options.destination ?? (stdoutDestination ??= defaultDestination()),
    ),
  );
}

/**
 * createLogger on first use: a worker process logs only when something goes wrong, and pino costs
 * a process start about 30 ms of CPU. Methods are bound to the real logger.
 */
export function createLazyLogger(options: LoggerOptions = {}): Logger {
  let real: Logger | null = null;
  const get = (): Logger => (real ??= createLogger(options));
  return new Proxy({} as Logger, {
    get(_target, prop) {
      const logger = get();
      const value = Reflect.get(logger, prop, logger) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(logger) : value;
    },
    set(_target, prop, value) {
      return Reflect.set(get(), prop, value);
    },
    has(_target, prop) {
      return Reflect.has(get(), prop);
    },
  });
}

/** Whether this process's logs are human-readable (then a refusal is printed once, not also logged). */
export function prettyLogs(): boolean {
  try {
    return logFormatOf() === 'pretty';
  } catch {
    return false;
  }
}

/** pino does not pass child bindings through the log formatter: scrub them when a child is made. */
function guardChildren(logger: Logger): Logger {
  const child = logger.child.bind(logger);
  logger.child = ((bindings: pino.Bindings, childOptions?: pino.ChildLoggerOptions) =>
    guardChildren(child(scrub(bindings, 2) as pino.Bindings, childOptions))) as unknown as Logger['child'];
  return logger;
}

export type { Logger };
