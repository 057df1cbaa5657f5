/**
 * Which database accounts the processors' and task handlers' sessions run on, and what that
 * guarantees (issue 40, README "Database accounts"), decided once at start-up by the host:
 *   engine    SQLite: read-only connections and the prepared statements' write targets
 *   grants    MySQL/OceanBase: a processor account and a reader account without any privilege on
 *             a supervisor table or the server's files, as the server itself reports
 *   filtered  MySQL/OceanBase: processors run on an account that could write the supervisor's
 *             tables; only the statement checks stand between them (a warning)
 * The children get the processor and reader URLs only, never the host's own.
 */
import { ConfigError, databaseUrlOf, parseDatabaseUrl, type DatabaseTarget } from '../config/database-url.ts';
import type { MysqlConnectionOptions } from './mysql/mysql-session.ts';

export const PROCESSOR_URL_VARIABLE = 'POWERCONTEXT_SERVER_RUNTIME_PROCESSOR_DATABASE_URL';
export const READER_URL_VARIABLE = 'POWERCONTEXT_SERVER_RUNTIME_READER_DATABASE_URL';

export type FencingSetup = 'engine' | 'grants' | 'filtered';

export interface SessionAccounts {
  setup: FencingSetup;
  /** Where the accounts come from: 'sqlite', 'configured', 'derived' or 'host' (the host's own account). */
  source: 'sqlite' | 'configured' | 'derived' | 'host';
  processor: DatabaseTarget;
  reader: DatabaseTarget;
  /** What lets a processor's session write, lock or read a supervisor table (setup 'filtered'). */
  problems: string[];
}

/** One line for status, /readyz and the start-up log. */
export function fencingSummary(a: SessionAccounts): string {
  switch (a.setup) {
    case 'engine':
      return 'fencing: enforced by the engine (read-only connections, write targets of the prepared statements)';
    case 'grants':
      return `fencing: enforced by grants (${a.source} processor account ${userOf(a.processor)}, reader ${userOf(a.reader)})`;
    case 'filtered':
      return a.source === 'host'
        ? 'filtered only: one privileged account (processors share the host account; see README "Database accounts")'
        : `filtered only: the processor or reader account is privileged (${a.problems.join('; ')})`;
  }
}

const userOf = (t: DatabaseTarget) => (t.backend === 'mysql' ? t.user : '');

/** The child processes' environment: their two URLs, and nothing of the host's own URL. */
export function childDatabaseEnv(a: SessionAccounts): Record<string, string> {
  return {
    POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: databaseUrlOf(a.processor),
    [PROCESSOR_URL_VARIABLE]: databaseUrlOf(a.processor),
    [READER_URL_VARIABLE]: databaseUrlOf(a.reader),
  };
}

/** The reader URL a child was given, else its own. */
export function readerTargetOf(env: NodeJS.ProcessEnv, own: DatabaseTarget): DatabaseTarget {
  const raw = env[READER_URL_VARIABLE]?.trim();
  return raw ? parseDatabaseUrl(raw, READER_URL_VARIABLE) : own;
}

function configured(env: NodeJS.ProcessEnv, variable: string, host: DatabaseTarget & { backend: 'mysql' }): DatabaseTarget | null {
  const raw = env[variable]?.trim();
  if (!raw) return null;
  const t = parseDatabaseUrl(raw, variable);
  if (t.backend !== 'mysql' || t.host !== host.host || t.port !== host.port || t.database !== host.database) {
    throw new ConfigError(`${variable} must name the same server and database as POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL (only the account differs)`);
  }
  return t;
}

/** Without a resolution: the children share the host's account (SQLite: the engine's guard). */
export function hostAccounts(target: DatabaseTarget): SessionAccounts {
  if (target.backend === 'sqlite') return { setup: 'engine', source: 'sqlite', processor: target, reader: target, problems: [] };
  return { setup: 'filtered', source: 'host', processor: target, reader: target, problems: ['not inspected'] };
}

export interface ResolveOptions {
  /** Create the derived accounts when none are recorded and the host's account may (default true). */
  provision?: boolean;
}

/** Decides the accounts; MySQL: connects as the host, and as each account to read what it may do. */
export async function resolveSessionAccounts(
  target: DatabaseTarget,
  env: NodeJS.ProcessEnv = process.env,
  options: ResolveOptions = {},
): Promise<SessionAccounts> {
  if (target.backend === 'sqlite') return { setup: 'engine', source: 'sqlite', processor: target, reader: target, problems: [] };
  const processorUrl = configured(env, PROCESSOR_URL_VARIABLE, target);
  const readerUrl = configured(env, READER_URL_VARIABLE, target);
  const { mysql2 } = await import('./mysql/mysql-session.ts');
  const accounts = await import('./mysql/db-accounts.ts');
  let processor: DatabaseTarget = processorUrl ?? target;
  let reader: DatabaseTarget = readerUrl ?? processorUrl ?? target;
  let source: SessionAccounts['source'] = processorUrl ? 'configured' : 'host';
  if (!processorUrl) {
    const conn = await mysql2().createConnection(connectionOf(target));
    try {
      let derived = await accounts.readDerivedAccounts(conn);
      // Readable: this is the administrator's URL. Provisioning is idempotent (the recorded
      // passwords, the business tables created since); an account that may not create users
      // keeps what is recorded.
      if (derived !== null && options.provision !== false) {
        derived = await accounts.provisionDerivedAccounts(conn, target.database).catch((error: unknown) => {
          if (isDenied(error)) return derived;
          throw error;
        });
      }
      const p = derived?.find((a) => a.role === 'processor');
      const r = derived?.find((a) => a.role === 'reader');
      if (p && r) {
        processor = { ...target, user: p.user, password: p.password };
        reader = readerUrl ?? { ...target, user: r.user, password: r.password };
        source = 'derived';
      }
    } finally {
      await conn.end().catch(() => undefined);
    }
  }
  const problems = [...(await inspect(processor, 'processor')).map((p) => `processor ${p}`), ...(await inspect(reader, 'reader')).map((p) => `reader ${p}`)];
  return { setup: problems.length === 0 ? 'grants' : 'filtered', source, processor, reader, problems };
}

async function inspect(t: DatabaseTarget, role: 'processor' | 'reader'): Promise<string[]> {
  if (t.backend !== 'mysql') return [];
  const { mysql2 } = await import('./mysql/mysql-session.ts');
  const { inspectAccount } = await import('./mysql/db-accounts.ts');
  const conn = await mysql2().createConnection(connectionOf(t));
  try {
    return (await inspectAccount(conn, t.database, role)).problems;
  } finally {
    await conn.end().catch(() => undefined);
  }
}

function connectionOf(t: DatabaseTarget & { backend: 'mysql' }): MysqlConnectionOptions {
  return { host: t.host, port: t.port, user: t.user, password: t.password, database: t.database };
}

/** ER_DBACCESS_DENIED 1044, ER_TABLEACCESS_DENIED 1142, ER_SPECIFIC_ACCESS_DENIED 1227, ER_PROCACCESS_DENIED 1370, ER_CANT_CREATE_USER 1396. */
function isDenied(error: unknown): boolean {
  return [1044, 1142, 1227, 1370, 1396].includes((error as { errno?: number }).errno ?? 0);
}
