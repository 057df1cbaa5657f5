/**
 * POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: `sqlite:<path>` (default
 * `sqlite:./var/powercontext.sqlite`) or `mysql://user:pass@host:port/db` (`oceanbase://` is the
 * same backend). Validated here without zod (worker children parse it at start-up and do not
 * pay for loading zod); errors name the variable. `redactDatabaseUrl` is the only form that may
 * reach a log.
 */

export const DATABASE_URL_VARIABLE = 'POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL';
export const DEFAULT_DATABASE_URL = 'sqlite:./var/powercontext.sqlite';

export type DatabaseTarget =
  | { backend: 'sqlite'; file: string }
  | { backend: 'mysql'; host: string; port: number; user: string; password: string; database: string };

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function parseDatabaseUrl(raw: string | undefined, variable = DATABASE_URL_VARIABLE): DatabaseTarget {
  const value = (raw ?? DEFAULT_DATABASE_URL).trim();
  if (value.length === 0) throw new ConfigError(`${variable} must not be empty`);
  if (value.startsWith('sqlite:')) {
    const file = value.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!file) throw new ConfigError(`${variable}: sqlite: needs a file path, e.g. sqlite:./var/powercontext.sqlite`);
    return { backend: 'sqlite', file };
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${variable} is not a valid URL (expected sqlite:<path> or mysql://user:pass@host:port/db)`);
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'oceanbase:') {
    throw new ConfigError(`${variable} has unsupported scheme ${JSON.stringify(url.protocol.replace(/:$/, ''))} (expected sqlite, mysql or oceanbase)`);
  }
  const decode = (text: string, part: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      throw new ConfigError(`${variable} has an invalid percent-encoding in the ${part} (write a literal % as %25)`);
    }
  };
  const database = decode(url.pathname.replace(/^\//, ''), 'database name');
  if (!/^[A-Za-z0-9_$]{1,64}$/.test(database)) {
    throw new ConfigError(`${variable} must name a database (mysql://user:pass@host:port/<database>, letters, digits, _ or $)`);
  }
  const port = url.port ? Number(url.port) : 3306;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new ConfigError(`${variable} has an invalid port`);
  return {
    backend: 'mysql',
    host: url.hostname || '127.0.0.1',
    port,
    user: decode(url.username || 'root', 'user name'),
    password: decode(url.password || '', 'password'),
    database,
  };
}

/** A form of the target that is safe to log: never the password, never the full URL. */
export function redactDatabaseUrl(target: DatabaseTarget): string {
  if (target.backend === 'sqlite') return `sqlite:${target.file}`;
  return `mysql://${target.user}:***@${target.host}:${target.port}/${target.database}`;
}

/** The URL a worker process is given for `target` (parseDatabaseUrl reads it back to the same target). */
export function databaseUrlOf(target: DatabaseTarget): string {
  if (target.backend === 'sqlite') return `sqlite:${target.file}`;
  const auth = target.password ? `${encodeURIComponent(target.user)}:${encodeURIComponent(target.password)}` : encodeURIComponent(target.user);
  return `mysql://${auth}@${target.host}:${target.port}/${target.database}`;
}
