/**
 * Positive evidence that a statement of a test's MySQL schema is blocked on a lock, instead of a
 * pause after which nothing happened: a transaction of the schema in LOCK WAIT, or a statement
 * of the schema running for a second or more. Both, because InnoDB's snapshot of its
 * transactions can stay stale while reads keep coming (INFORMATION_SCHEMA_POLL_MS below; another
 * test process polling too can keep it so). For SQLite child processes, whose wait blocks inside
 * better-sqlite3 and cannot be reported by the child: its main thread seen asleep in the busy handler.
 */
import fs from 'node:fs';
import type { BackendFixture } from './backends.ts';
import { waitFor } from './backends.ts';

/**
 * InnoDB refreshes its INNODB_TRX / INNODB_LOCK_WAITS snapshot only when nobody read it for
 * 100 ms (trx_i_s_cache): polled faster, it stays as it was at the first read and never shows a
 * wait that began later. That, not a missing row, was the unlisted wait seen before.
 */
const INFORMATION_SCHEMA_POLL_MS = 150;

/** Resolves once a statement of `fx`'s schema is blocked (a long one counts only if its text starts with `infoPrefix`, when given); rejects after `timeoutMs`. */
export async function waitForBlockedStatement(fx: BackendFixture, options: { infoPrefix?: string; timeoutMs?: number } = {}): Promise<void> {
  const database = (fx.target as { database: string }).database;
  const like = `${options.infoPrefix ?? ''}%`;
  await waitFor(
    async () => {
      const rows = await fx.query(
        `SELECT (SELECT COUNT(*) FROM information_schema.INNODB_TRX t
                   JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
                  WHERE t.trx_state = 'LOCK WAIT' AND p.DB = ?) AS waiting,
                (SELECT COUNT(*) FROM information_schema.PROCESSLIST p
                  WHERE p.DB = ? AND p.ID <> CONNECTION_ID() AND p.COMMAND = 'Query' AND p.TIME >= 1
                    AND IFNULL(p.INFO, '') LIKE ?) AS blocked`,
        [database, database, like],
      );
      return Number(rows[0].waiting) + Number(rows[0].blocked) >= 1;
    },
    options.timeoutMs ?? 10_000,
    INFORMATION_SCHEMA_POLL_MS,
  );
}

/** Whether `promise` is still pending once the microtasks and one turn of the event loop ran. */
export async function stillPending(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((r) => setImmediate(r));
  return !settled;
}

/** Syscalls a process sleeps in from SQLite's busy handler (usleep), by architecture. */
const SLEEP_SYSCALLS: Record<string, string[]> = { x64: ['230', '35'], arm64: ['115', '101'] };

/** Whether the main thread of `pid` is asleep in a synchronous sleep (Linux /proc), or null where that cannot be read. */
function inSyncSleep(pid: number): boolean | null {
  let seen: boolean | null = null;
  try {
    const call = fs.readFileSync(`/proc/${pid}/syscall`, 'utf8').split(' ')[0]!;
    if (SLEEP_SYSCALLS[process.arch]?.includes(call)) return true;
    seen = false;
  } catch {
    // not Linux, or not permitted: try wchan
  }
  try {
    return fs.readFileSync(`/proc/${pid}/wchan`, 'utf8').includes('nanosleep') || (seen ?? false);
  } catch {
    return seen;
  }
}

/**
 * Positive evidence that a child process is waiting for SQLite's write lock: its main thread
 * asleep inside better-sqlite3's busy handler (a Node event loop never sleeps synchronously; it
 * waits in epoll). Rejects when `settled()` turns true first (the call did not wait), or after
 * `timeoutMs`. Where /proc cannot be read (not Linux), it waits `fallbackMs` instead.
 */
export async function waitForSqliteBusyWait(pid: number, settled: () => boolean, options: { timeoutMs?: number; fallbackMs?: number } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    if (settled()) throw new Error(`process ${pid} answered before it was seen waiting for the SQLite write lock`);
    const sleeping = inSyncSleep(pid);
    if (sleeping === null) {
      await new Promise((r) => setTimeout(r, options.fallbackMs ?? 500));
      return;
    }
    if (sleeping) return;
    if (Date.now() > deadline) throw new Error(`process ${pid} was not seen waiting for the SQLite write lock within ${options.timeoutMs ?? 10_000} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** The InnoDB transaction id of `conn`'s open transaction (it must have read with a lock or written). */
export async function ownTrxId(conn: { query: (sql: string) => Promise<unknown> }): Promise<string> {
  const [rows] = (await conn.query('SELECT trx_id FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID()')) as [
    Array<{ trx_id: unknown }>,
  ];
  if (!rows[0]) throw new Error('the connection has no open InnoDB transaction');
  return String(rows[0].trx_id);
}

/**
 * Waits until some transaction waits for a lock held by transaction `blockerTrxId`
 * (INNODB_LOCK_WAITS), failing at once if `settled()` turns true. Resolves 'seen' then. If the
 * snapshot stays stale (see the header) for `fallbackMs`, it resolves 'unlisted' while
 * `settled()` is still false: the caller's verdict falls back to an absence over that window
 * instead of flaking.
 */
export async function waitForWaitOn(fx: BackendFixture, blockerTrxId: string, settled: () => boolean, fallbackMs = 5000): Promise<'seen' | 'unlisted'> {
  const deadline = Date.now() + fallbackMs;
  for (;;) {
    if (settled()) throw new Error(`the waiting statement finished while transaction ${blockerTrxId} was still open`);
    const rows = await fx.query('SELECT COUNT(*) AS n FROM information_schema.INNODB_LOCK_WAITS WHERE blocking_trx_id = ?', [blockerTrxId]);
    if (Number(rows[0]?.n) > 0) return 'seen';
    if (Date.now() > deadline) return 'unlisted';
    await new Promise((r) => setTimeout(r, INFORMATION_SCHEMA_POLL_MS));
  }
}
