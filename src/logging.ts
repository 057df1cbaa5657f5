/**
 * pino JSON logs. Never logged: source text, prompts, model output, credentials, full connection
 * strings. Redaction below is a second line of defence for fields that might carry them.
 */
import pino, { type Logger } from 'pino';

export const REDACT_PATHS = [
  'password', '*.password', 'databaseUrl', '*.databaseUrl', 'connectionString', '*.connectionString',
  'url', '*.url', 'prompt', '*.prompt', 'content', '*.content', 'output', '*.output', 'source', '*.source',
  'token', '*.token', 'secret', '*.secret', 'env', '*.env',
];

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
