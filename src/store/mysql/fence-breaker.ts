/**
 * The taker's side of the commit bound (issue 40 item 2): a takeover writes the fence rows of the
 * key and so waits for every fenced transaction of the old term still open. When the old leader
 * is paused (its watchdog with it) and its worker blocks its own event loop, nothing else ends
 * such a transaction. So while a term-changing call of this host waits, the breaker asks the
 * server which sessions block it (MariaDB/MySQL 5.7: INNODB_LOCK_WAITS; MySQL 8:
 * performance_schema.data_lock_waits; COMPATIBILITY row 128) and ends those of the processor
 * account with KILL CONNECTION, as that account. The old term has expired by then (the call
 * writes the fences only after it found the lease expired), so only stale transactions are ended;
 * they roll back and their work stays owed. Seeing other sessions' lock waits needs PROCESS for
 * the host's account; without it the breaker says so once and the other bounds remain.
 */
import type { DatabaseTarget } from '../../config/database-url.ts';
import type { Logger } from '../../logging.ts';
import { killMysqlConnection } from '../transaction-observer.ts';
import type { MysqlEngine } from './transaction-bound.ts';
import type { WatcherConnection } from './watcher-connection.ts';

type Mysql = DatabaseTarget & { backend: 'mysql' };

/**
 * The takeovers that write the fence rows of another holder's key (pc_aps_write_fences); not
 * pc_aps_invalidate_term, by which a holder ends its own term after its workers stopped.
 */
export const TAKEOVER_OPERATIONS: ReadonlySet<string> = new Set(['pc_aps_acquire_term', 'pc_aps_switch_mode']);

/** Sessions blocking the transaction of `threadId`, with their account and current statement. */
export function blockersQuery(engine: MysqlEngine): string | null {
  switch (engine) {
    case 'mariadb':
      return `SELECT DISTINCT b.trx_mysql_thread_id AS id, p.USER AS user, p.INFO AS info
                FROM information_schema.INNODB_LOCK_WAITS w
                JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id
                JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id
                LEFT JOIN information_schema.PROCESSLIST p ON p.ID = b.trx_mysql_thread_id
               WHERE r.trx_mysql_thread_id = ?`;
    case 'mysql':
      return `SELECT DISTINCT bt.PROCESSLIST_ID AS id, bt.PROCESSLIST_USER AS user, bt.PROCESSLIST_INFO AS info
                FROM performance_schema.data_lock_waits w
                JOIN performance_schema.threads rt ON rt.THREAD_ID = w.REQUESTING_THREAD_ID
                JOIN performance_schema.threads bt ON bt.THREAD_ID = w.BLOCKING_THREAD_ID
               WHERE rt.PROCESSLIST_ID = ?`;
    case 'oceanbase':
      // Its lock views are its own (GV$OB_LOCKS) and could not be run here: no lookup rather
      // than a guessed one (COMPATIBILITY row 128; WatcherConnection says so once).
      return null;
  }
}

export interface FenceBreakerOptions {
  /** The host's connection for looking at other sessions (needs PROCESS). */
  watcher: WatcherConnection;
  /** The processor account: its sessions are the ones ended, as itself. */
  processor: Mysql;
  logger: Logger;
  /** How long a call may wait before its blockers are looked up (ms). */
  delayMs?: number;
  /** Between lookups; InnoDB refreshes its lock-wait snapshot after 100 ms without a read. */
  pollMs?: number;
}

export class FenceBreaker {
  private warned = false;
  /** Sessions ended (tests, metrics). */
  ended = 0;

  constructor(private readonly options: FenceBreakerOptions) {}

  /** Watches the call in flight on session `threadId` until the returned function is called. */
  watch(threadId: number): () => void {
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    const round = async () => {
      if (stopped) return;
      try {
        await this.endBlockers(threadId);
      } catch (error) {
        if (!this.warned) {
          this.warned = true;
          this.options.logger.warn(
            { err: (error as Error).message },
            'cannot look up the sessions a takeover waits for (grant PROCESS to the runtime account); the takeover waits for them',
          );
        }
        return;
      }
      if (!stopped) timer = setTimeout(() => void round(), this.options.pollMs ?? 200).unref();
    };
    timer = setTimeout(() => void round(), this.options.delayMs ?? 1000).unref();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }

  private async endBlockers(threadId: number): Promise<void> {
    const { conn, engine } = await this.options.watcher.get();
    const sql = blockersQuery(engine);
    if (!sql) return;
    const [rows] = await conn.query(sql, [threadId]);
    const processorUser = this.options.processor.user;
    for (const r of rows as Array<{ id: unknown; user: unknown; info: unknown }>) {
      const id = Number(r.id);
      // Only the processors' sessions. When they share the host's account (filtered only), a term
      // operation of another host is told apart by its text; a processor's text never spares it.
      const sharedAccount = processorUser === this.options.watcher.target.user;
      if (!Number.isSafeInteger(id) || String(r.user) !== processorUser) continue;
      if (sharedAccount && /^\s*CALL\s+pc_aps_(?:acquire|renew|switch|invalidate)/i.test(String(r.info ?? ''))) continue;
      this.options.logger.warn({ connectionId: id }, 'a takeover waits for a fenced transaction of the expired term: its session is ended (KILL CONNECTION)');
      await killMysqlConnection(this.options.processor, id);
      this.ended += 1;
    }
  }
}
