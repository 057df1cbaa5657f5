/**
 * SQLite durability (issue 12 item 5): PRAGMA synchronous of every connection the runtime opens,
 * from POWERCONTEXT_SERVER_RUNTIME_SQLITE_SYNCHRONOUS. WAL with NORMAL (default): a commit
 * survives a crash of the process, not of the machine (power loss may drop the last commits);
 * FULL: the WAL is synced at every commit, which survives power loss too. Read from the
 * environment at each open because worker, task and reader processes inherit it; validated at
 * start-up by the runtime configuration. No zod here: worker children import this.
 */
import { ConfigError } from '../../config/database-url.ts';

export const SQLITE_SYNCHRONOUS_VARIABLE = 'POWERCONTEXT_SERVER_RUNTIME_SQLITE_SYNCHRONOUS';
export const SQLITE_SYNCHRONOUS_VALUES = ['NORMAL', 'FULL'] as const;
export type SqliteSynchronous = (typeof SQLITE_SYNCHRONOUS_VALUES)[number];
export const DEFAULT_SQLITE_SYNCHRONOUS: SqliteSynchronous = 'NORMAL';

/** NORMAL or FULL (any case); unset or blank is NORMAL; anything else is a ConfigError naming the variable. */
export function parseSqliteSynchronous(raw: string | undefined): SqliteSynchronous {
  const value = raw?.trim() ?? '';
  if (value === '') return DEFAULT_SQLITE_SYNCHRONOUS;
  const upper = value.toUpperCase();
  if ((SQLITE_SYNCHRONOUS_VALUES as readonly string[]).includes(upper)) return upper as SqliteSynchronous;
  throw new ConfigError(`${SQLITE_SYNCHRONOUS_VARIABLE} must be NORMAL or FULL (got ${JSON.stringify(value)})`);
}

/** The setting of this process's environment. */
export function sqliteSynchronous(env: Record<string, string | undefined> = process.env): SqliteSynchronous {
  return parseSqliteSynchronous(env[SQLITE_SYNCHRONOUS_VARIABLE]);
}
