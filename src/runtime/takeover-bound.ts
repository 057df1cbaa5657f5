/**
 * Attaches the fence breaker (store/mysql/fence-breaker.ts) to a MySQL host store: its takeovers
 * end the stale fenced transactions they wait for; and the session sweeper
 * (store/mysql/session-sweeper.ts), which ends processor and reader transactions past their
 * budget that no worker reported. A store without `watchCall` (SQLite: the
 * process of a stale commit is killed by its own host, and a new host takes over only once the
 * old one is gone) gets nothing. Returns how to close it.
 */
import type { DatabaseTarget } from '../config/database-url.ts';
import type { Logger } from '../logging.ts';
import type { SessionAccounts } from '../store/session-accounts.ts';
import type { OperationName } from '../store/operations.ts';
import type { Clock } from './clock.ts';

interface WatchableStore {
  watchCall?: ((op: OperationName, threadId: number) => (() => void) | null) | null;
}

export async function attachFenceBreaker(
  store: object,
  host: DatabaseTarget,
  accounts: SessionAccounts,
  logger: Logger,
  sweep?: { budgetMs: number; clock: Clock },
): Promise<() => Promise<void>> {
  const s = store as WatchableStore;
  const { processor, reader } = accounts;
  if (host.backend !== 'mysql' || processor.backend !== 'mysql' || reader.backend !== 'mysql' || !('watchCall' in s)) return async () => undefined;
  const { FenceBreaker, TAKEOVER_OPERATIONS } = await import('../store/mysql/fence-breaker.ts');
  const { WatcherConnection } = await import('../store/mysql/watcher-connection.ts');
  const watcher = new WatcherConnection(host, logger);
  const breaker = new FenceBreaker({ watcher, processor, logger });
  s.watchCall = (op, threadId) => (TAKEOVER_OPERATIONS.has(op) ? breaker.watch(threadId) : null);
  // Sessions of their own accounts only: never when processors share the host's account.
  let sweeper: import('../store/mysql/session-sweeper.ts').SessionSweeper | null = null;
  if (sweep && processor.user !== host.user && reader.user !== host.user) {
    const { SessionSweeper } = await import('../store/mysql/session-sweeper.ts');
    sweeper = new SessionSweeper({ watcher, processor, reader, budgetMs: sweep.budgetMs, logger, clock: sweep.clock });
    sweeper.start();
  }
  return async () => {
    s.watchCall = null;
    sweeper?.stop();
    await watcher.close();
  };
}
