/**
 * A bound on a processor's or a task handler's transaction that its session cannot lift (issue
 * 40 item 2): the child process tells its host when a transaction of its store opens (with the
 * MySQL session id) and when it ends; the host ends one still open after its budget
 * (runtime/transaction-watchdog.ts: KILL CONNECTION on MySQL, the process on SQLite), also when
 * the child is paused. The child also ends it itself when its own event loop is free (the host
 * may be the one paused). Nothing the session runs (SET, comments) changes either.
 */
import type { DatabaseTarget } from '../config/database-url.ts';

export interface TransactionObserver {
  opened(connectionId: number | null): void;
  closed(): void;
}

/** Child → host. */
export interface TransactionMessage {
  type: 'tx';
  state: 'open' | 'closed';
  connectionId: number | null;
}

/** The budget given to a child (ms), one lease TTL by default (the host sets it). */
export const TRANSACTION_BUDGET_VARIABLE = 'APSUP_TRANSACTION_BUDGET_MS';

export function transactionBudgetFromEnv(env: NodeJS.ProcessEnv = process.env): number | null {
  const ms = Number(env[TRANSACTION_BUDGET_VARIABLE]);
  return Number.isInteger(ms) && ms > 0 ? ms : null;
}

/**
 * The child's observer: reports each transaction to the host and arms its own timer. At the
 * budget, MySQL: KILL CONNECTION of the session from a connection of the same account (an account
 * may end its own sessions without any privilege); SQLite: the process ends (the OS releases the
 * lock, the journal rolls the transaction back).
 */
export function reportTransactions(send: (m: TransactionMessage) => void, target: DatabaseTarget, budgetMs: number | null): TransactionObserver {
  let timer: NodeJS.Timeout | null = null;
  const disarm = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  return {
    opened(connectionId) {
      send({ type: 'tx', state: 'open', connectionId });
      disarm();
      if (budgetMs === null) return;
      // A small margin after the host's own deadline: the host acts first when it runs.
      timer = setTimeout(() => void endOwnTransaction(target, connectionId), budgetMs + 250);
      timer.unref();
    },
    closed() {
      disarm();
      send({ type: 'tx', state: 'closed', connectionId: null });
    },
  };
}

async function endOwnTransaction(target: DatabaseTarget, connectionId: number | null): Promise<void> {
  if (target.backend === 'sqlite' || connectionId === null) {
    process.kill(process.pid, 'SIGKILL');
    return;
  }
  await killMysqlConnection(target, connectionId).catch(() => process.kill(process.pid, 'SIGKILL'));
}

/** KILL CONNECTION id on a connection of its own, as `target`'s account. */
export async function killMysqlConnection(target: DatabaseTarget & { backend: 'mysql' }, connectionId: number): Promise<void> {
  const { mysql2 } = await import('./mysql/mysql-session.ts');
  const { host, port, user, password, database } = target;
  const conn = await mysql2().createConnection({ host, port, user, password, database });
  try {
    await conn.query('KILL CONNECTION ?', [connectionId]);
  } catch (error) {
    // ER_NO_SUCH_THREAD: the session had ended already.
    if ((error as { errno?: number }).errno !== 1094) throw error;
  } finally {
    await conn.end().catch(() => undefined);
  }
}
