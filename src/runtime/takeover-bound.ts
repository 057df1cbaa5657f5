/**
 * Attaches the fence breaker (store/mysql/fence-breaker.ts) to a MySQL host store: its takeovers
 * end the stale fenced transactions they wait for. A store without `watchCall` (SQLite: the
 * process of a stale commit is killed by its own host, and a new host takes over only once the
 * old one is gone) gets nothing. Returns how to close it.
 */
import type { DatabaseTarget } from '../config/database-url.ts';
import type { Logger } from '../logging.ts';
import type { SessionAccounts } from '../store/session-accounts.ts';
import type { OperationName } from '../store/operations.ts';

interface WatchableStore {
  watchCall?: ((op: OperationName, threadId: number) => (() => void) | null) | null;
}

export async function attachFenceBreaker(store: object, host: DatabaseTarget, accounts: SessionAccounts, logger: Logger): Promise<() => Promise<void>> {
  const s = store as WatchableStore;
  if (host.backend !== 'mysql' || accounts.processor.backend !== 'mysql' || !('watchCall' in s)) return async () => undefined;
  const { FenceBreaker, TAKEOVER_OPERATIONS } = await import('../store/mysql/fence-breaker.ts');
  const breaker = new FenceBreaker({ watcher: host, processor: accounts.processor, logger });
  s.watchCall = (op, threadId) => (TAKEOVER_OPERATIONS.has(op) ? breaker.watch(threadId) : null);
  return async () => {
    s.watchCall = null;
    await breaker.close();
  };
}
