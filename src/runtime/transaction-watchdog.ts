/**
 * The host's side of the transaction bound (issue 40 item 2, store/transaction-observer.ts): a
 * child reports each transaction it opens; one still open when its budget (one lease TTL) passes
 * is ended from outside the child: MySQL, KILL CONNECTION of its session from the host's own
 * connection (as the processor account, which may end its own sessions); SQLite, SIGKILL of the
 * child (the OS releases the write lock and the journal rolls back). So a paused or stuck worker,
 * or a statement that sleeps, cannot hold a fence row or the write lock past the budget.
 */
import type { ChildProcess } from 'node:child_process';
import type { DatabaseTarget } from '../config/database-url.ts';
import type { Logger } from '../logging.ts';
import { killMysqlConnection, TRANSACTION_BUDGET_VARIABLE, type TransactionMessage } from '../store/transaction-observer.ts';
import { systemClock, type Clock, type ClockTimer } from './clock.ts';

export interface WatchdogOptions {
  budgetMs: number;
  /** The children's (processor) account: its sessions are the ones ended. */
  target: DatabaseTarget;
  logger: Logger;
  /** Log fields naming the pool (family, tasks). */
  labels?: Record<string, string>;
  clock?: Clock;
  /** How a session is ended (tests); default KILL CONNECTION as `target`. */
  killSession?: (connectionId: number) => Promise<void>;
}

export function isTransactionMessage(m: unknown): m is TransactionMessage {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === 'tx';
}

export class TransactionWatchdog {
  private readonly open = new Map<ChildProcess, ClockTimer>();
  private readonly clock: Clock;
  /** Transactions ended by the watchdog (metrics, tests). */
  ended = 0;

  constructor(private readonly options: WatchdogOptions) {
    this.clock = options.clock ?? systemClock;
  }

  /** The environment a child needs to arm its own timer too. */
  childEnv(): Record<string, string> {
    return { [TRANSACTION_BUDGET_VARIABLE]: String(this.options.budgetMs) };
  }

  /** Follows one child's reports until it exits. */
  watch(child: ChildProcess): void {
    const onMessage = (m: unknown) => {
      if (!isTransactionMessage(m)) return;
      if (m.state === 'open') this.opened(child, m.connectionId);
      else this.closed(child);
    };
    child.on('message', onMessage);
    child.once('exit', () => {
      child.off('message', onMessage);
      this.closed(child);
    });
  }

  private opened(child: ChildProcess, connectionId: number | null): void {
    this.closed(child);
    const timer = this.clock.setTimeout(() => {
      this.open.delete(child);
      void this.end(child, connectionId);
    }, this.options.budgetMs);
    this.open.set(child, timer);
  }

  private closed(child: ChildProcess): void {
    this.open.get(child)?.cancel();
    this.open.delete(child);
  }

  private async end(child: ChildProcess, connectionId: number | null): Promise<void> {
    this.ended += 1;
    const fields = { ...this.options.labels, workerPid: child.pid, budgetMs: this.options.budgetMs };
    const target = this.options.target;
    if (target.backend === 'sqlite' || connectionId === null) {
      this.options.logger.warn(fields, 'a transaction of a child outlived its budget: the child is killed (its transaction rolls back)');
      child.kill('SIGKILL');
      return;
    }
    this.options.logger.warn(fields, 'a transaction of a child outlived its budget: its session is ended (KILL CONNECTION; it rolls back)');
    const kill = this.options.killSession ?? ((id: number) => killMysqlConnection(target, id));
    await kill(connectionId).catch((error: unknown) => {
      // The session could not be ended from here: end the process (its connection closes with it).
      this.options.logger.warn({ ...fields, err: (error as Error).message }, 'ending the session failed: the child is killed');
      child.kill('SIGKILL');
    });
  }

  close(): void {
    for (const t of this.open.values()) t.cancel();
    this.open.clear();
  }
}
