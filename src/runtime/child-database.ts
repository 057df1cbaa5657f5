/**
 * What a pool of child processes (processor workers, task attempt workers) is given of the
 * database: the processor account's URL and the reader's (session-accounts.ts; never the host's
 * own URL when restricted accounts exist), and the watchdog that ends a child's transaction past
 * its budget (transaction-watchdog.ts). A bare URL (tests, benches) means: that account, no
 * watchdog.
 */
import { databaseUrlOf } from '../config/database-url.ts';
import type { Logger } from '../logging.ts';
import { childDatabaseEnv, type SessionAccounts } from '../store/session-accounts.ts';
import type { Clock } from './clock.ts';
import { InvocationTokens } from './invocation-tokens.ts';
import { TransactionWatchdog } from './transaction-watchdog.ts';

export interface ChildDatabase {
  url: string;
  env: Record<string, string>;
  watchdog: TransactionWatchdog | null;
  /** The invocation tokens of the worker's acknowledgement (invocation-tokens.ts). */
  tokens: InvocationTokens;
}

export function childDatabaseOf(value: string | ChildDatabase): ChildDatabase {
  return typeof value === 'string' ? { url: value, env: {}, watchdog: null, tokens: new InvocationTokens() } : value;
}

export function childDatabase(accounts: SessionAccounts, budgetMs: number, logger: Logger, labels: Record<string, string>, clock?: Clock): ChildDatabase {
  const watchdog = new TransactionWatchdog({ budgetMs, target: accounts.processor, logger, labels, clock });
  return { url: databaseUrlOf(accounts.processor), env: { ...childDatabaseEnv(accounts), ...watchdog.childEnv() }, watchdog, tokens: new InvocationTokens() };
}

/** The environment of one child: the pool's database part last, so nothing of the host's URL leaks through. */
export function childEnvOf(db: ChildDatabase): Record<string, string> {
  return { ...db.env, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: db.url };
}

/**
 * The environment a child inherits from its host, without the host's secrets: every
 * POWERCONTEXT_SERVER_RUNTIME_* URL, token, password or secret (the host's database URL, the
 * console's operator token, the wake-up channel's URL). The pool's database part is added after.
 * A child's own /proc reads of its parent are not prevented here (SECURITY.md).
 */
export function childBaseEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (/^POWERCONTEXT_SERVER_RUNTIME_\w*(?:URL|TOKEN|PASSWORD|SECRET)$/i.test(k)) continue;
    out[k] = v;
  }
  return out;
}
