/**
 * The host's one connection for looking at other sessions (fence-breaker.ts, session-sweeper.ts):
 * opened on first use as the host's account, its engine read once, reopened after an error.
 */
import type { Connection } from 'mysql2/promise';
import type { DatabaseTarget } from '../../config/database-url.ts';
import type { Logger } from '../../logging.ts';
import { mysql2 } from './mysql-session.ts';
import { engineOf, type MysqlEngine } from './transaction-bound.ts';

export interface Watcher {
  conn: Connection;
  engine: MysqlEngine;
}

export class WatcherConnection {
  private pending: Promise<Watcher> | null = null;
  private toldOceanBase = false;

  constructor(
    readonly target: DatabaseTarget & { backend: 'mysql' },
    private readonly logger: Logger,
  ) {}

  get(): Promise<Watcher> {
    this.pending ??= (async () => {
      const { host, port, user, password, database } = this.target;
      const conn = await mysql2().createConnection({ host, port, user, password, database });
      conn.on('error', () => this.reset());
      const [rows] = await conn.query('SELECT VERSION() AS v');
      const engine = engineOf(String((rows as Array<{ v: unknown }>)[0].v));
      if (engine === 'oceanbase' && !this.toldOceanBase) {
        this.toldOceanBase = true;
        // COMPATIBILITY rows 128 and 130: its lock and transaction views are its own (GV$OB_LOCKS).
        this.logger.warn(
          {},
          'OceanBase: stale processor sessions are ended by their workers and hosts, not looked up by takeovers (COMPATIBILITY rows 128, 130)',
        );
      }
      return { conn, engine };
    })().catch((error: unknown) => {
      this.pending = null;
      throw error;
    });
    return this.pending;
  }

  /** Drops the connection (after an error): the next get() opens a new one. */
  reset(): void {
    const p = this.pending;
    this.pending = null;
    void p?.then((w) => w.conn.end()).catch(() => undefined);
  }

  async close(): Promise<void> {
    const p = this.pending;
    this.pending = null;
    if (p) await (await p.catch(() => null))?.conn.end().catch(() => undefined);
  }
}
