/**
 * Positive evidence that a statement of a test's MySQL schema is blocked on a lock, instead of a
 * pause after which nothing happened: a transaction of the schema in LOCK WAIT, or a statement
 * of the schema running for a second or more. Both, because MariaDB 10.11 sometimes lists no
 * INNODB_TRX row for a waiting write (seen with six test processes at once: the statement
 * 'Sending data' for 10 s, no transaction).
 */
import type { BackendFixture } from './backends.ts';
import { waitFor } from './backends.ts';

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
    20,
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
