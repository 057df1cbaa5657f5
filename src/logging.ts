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

export const REDACT_PATHS = REDACTED_FIELDS.flatMap((f) => [f, `*.${f}`, `*.*.${f}`]);

export function createLogger(options: { level?: string; name?: string; destination?: pino.DestinationStream } = {}): Logger {
  return pino(
    {
      name: options.name ?? 'apsup',
      level: options.level ?? process.env.APSUP_LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
    },
    options.destination,
  );
}

export type { Logger };
