/**
 * POWERCONTEXT_SERVER_RUNTIME_NOTIFY_REDIS_URL (issue 12 item 6): the optional cross-process
 * wake-up channel over Redis pub/sub. Unset, blank or `off`: no channel (polling only, the
 * default). Otherwise a `redis://` or `rediss://` URL (`redis://[user:pass@]host[:port][/db]`).
 * `redactRedisUrl` is the only form that may reach a log: it never carries credentials.
 */
import { ConfigError } from '../config/database-url.ts';

export const NOTIFY_REDIS_URL_VARIABLE = 'POWERCONTEXT_SERVER_RUNTIME_NOTIFY_REDIS_URL';

export interface NotifyConfig {
  /** The URL as given (credentials included): for the client only, never logged. */
  url: string;
  /** host:port/db, for logs and readiness. */
  redacted: string;
}

export function parseNotifyConfig(env: NodeJS.ProcessEnv = process.env): NotifyConfig | null {
  const raw = env[NOTIFY_REDIS_URL_VARIABLE]?.trim() ?? '';
  if (raw === '' || raw.toLowerCase() === 'off') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${NOTIFY_REDIS_URL_VARIABLE} is not a valid URL (expected redis://[user:pass@]host[:port][/db], or off)`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ConfigError(
      `${NOTIFY_REDIS_URL_VARIABLE} has unsupported scheme ${JSON.stringify(url.protocol.replace(/:$/, ''))} (expected redis or rediss, or off)`,
    );
  }
  if (!url.hostname) throw new ConfigError(`${NOTIFY_REDIS_URL_VARIABLE} needs a host (redis://host:6379)`);
  const port = url.port === '' ? 6379 : Number(url.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ConfigError(`${NOTIFY_REDIS_URL_VARIABLE}: port must be 1..65535`);
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !/^(?:[0-9]|1[0-5])$/.test(db)) throw new ConfigError(`${NOTIFY_REDIS_URL_VARIABLE}: database must be 0..15, got ${JSON.stringify(db)}`);
  if (url.search || url.hash) throw new ConfigError(`${NOTIFY_REDIS_URL_VARIABLE}: query strings and fragments are not supported`);
  return { url: raw, redacted: redactRedisUrl(url, port, db) };
}

function redactRedisUrl(url: URL, port: number, db: string): string {
  return `${url.protocol}//${url.hostname}:${port}/${db === '' ? '0' : db}`;
}
