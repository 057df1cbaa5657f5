/**
 * The commit bound without trusting the worker (issue 40 review): the watchdog hears only the
 * transactions a worker reports, and a processor could keep quiet or open sessions of its own
 * with its account. So the host also asks the server, every third of a budget, for transactions
 * of the processor and reader accounts older than one budget (plus a second: the watchdog acts
 * first) and ends them with KILL CONNECTION as their own account. Needs PROCESS for the host's
 * account (INNODB_TRX, PROCESSLIST of other accounts); MariaDB and MySQL (COMPATIBILITY row 130).
 */
import type { DatabaseTarget } from '../../config/database-url.ts';
import type { Logger } from '../../logging.ts';
import type { Clock, ClockTimer } from '../../runtime/clock.ts';
import { killMysqlConnection } from '../transaction-observer.ts';
import type { WatcherConnection } from './watcher-connection.ts';

type Mysql = DatabaseTarget & { backend: 'mysql' };

export const STALE_TRANSACTIONS_SQL = `SELECT t.trx_mysql_thread_id AS id, p.USER AS user
  FROM information_schema.INNODB_TRX t
  JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
 WHERE p.USER IN (?, ?) AND p.DB = ? AND TIMESTAMPDIFF(MICROSECOND, t.trx_started, NOW(6)) > ?`;

export interface SweeperOptions {
  /** The host's connection for looking at other sessions (needs PROCESS). */
  watcher: WatcherConnection;
  processor: Mysql;
  reader: Mysql;
  budgetMs: number;
  logger: Logger;
  clock: Clock;
}

export class SessionSweeper {
  private timer: ClockTimer | null = null;
  private running = false;
  private warned = false;
  ended = 0;

  constructor(private readonly options: SweeperOptions) {}

  start(): void {
    this.timer = this.options.clock.setInterval(() => void this.sweep(), Math.max(500, Math.floor(this.options.budgetMs / 3)));
  }

  async sweep(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const o = this.options;
      const { conn, engine } = await o.watcher.get();
      if (engine === 'oceanbase') return; // no INNODB_TRX there (COMPATIBILITY row 130)
      const [rows] = await conn.query(STALE_TRANSACTIONS_SQL, [o.processor.user, o.reader.user, o.watcher.target.database, (o.budgetMs + 1000) * 1000]);
      for (const r of rows as Array<{ id: unknown; user: unknown }>) {
        const id = Number(r.id);
        if (!Number.isSafeInteger(id)) continue;
        const as = String(r.user) === o.processor.user ? o.processor : o.reader;
        o.logger.warn(
          { connectionId: id, account: as.user, budgetMs: o.budgetMs },
          'a transaction of a processor or reader session outlived its budget: ended (KILL CONNECTION)',
        );
        await killMysqlConnection(as, id);
        this.ended += 1;
      }
    } catch (error) {
      if (!this.warned) {
        this.warned = true;
        this.options.logger.warn(
          { err: (error as Error).message },
          "cannot list the processors' transactions (grant PROCESS to the runtime account); only their own reports bound them",
        );
      }
      this.options.watcher.reset();
    } finally {
      this.running = false;
    }
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = null;
  }
}
