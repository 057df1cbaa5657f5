// MySQL/OceanBase (issue 17 item 2, RFC 1): a renewal never waits on a business transaction.
// A fenced transaction (Store.fencedTransaction, ctx.commit's path) held open for 3x the TTL on
// its own connection while the leader renews on another: every renewal answers promptly and the
// term is kept; the held commit then commits under that term. A takeover of an expired lease
// still waits for an open fenced transaction, and the two outcomes never both happen: either the
// held transaction commits before the new term exists, or it is refused.
// SQLite is not here: one writer at a time, a renewal there waits for any write transaction by
// design (the host side of that is issue 17 item 1).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TermLostError } from '../../../src/store/errors.ts';
import { MysqlStore } from '../../../src/store/mysql/mysql-store.ts';
import type { Store, Term } from '../../../src/store/types.ts';
import { createBackend, waitFor, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';

const TTL_MS = 1000;
const RENEW_EVERY_MS = 200;
/** A renewal that takes longer than this is a renewal that waited on a lock (a CALL takes a few ms). */
const PROMPT_MS = TTL_MS / 2;

function asTerm(key: string, r: { holderId: string | null; supervisorGeneration: number }): Term {
  return { supervisorKey: key, holderId: r.holderId!, supervisorGeneration: r.supervisorGeneration };
}

/** Renews every RENEW_EVERY_MS until stopped; records each renewal's latency and the first failure. */
function renewLoop(store: Store, term: Term) {
  const latencies: number[] = [];
  let failure: unknown = null;
  let stopped = false;
  const done = (async () => {
    while (!stopped && !failure) {
      const started = performance.now();
      try {
        await store.renewTerm(term, TTL_MS);
      } catch (error) {
        failure = error;
      }
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, RENEW_EVERY_MS));
    }
  })();
  return {
    latencies,
    failure: () => failure,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

async function dbNow(fx: BackendFixture): Promise<Date> {
  const rows = await fx.query('SELECT UTC_TIMESTAMP(3) AS now');
  return new Date(`${String(rows[0].now).replace(' ', 'T')}Z`);
}

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  if (backend === 'mysql')
    describe('[mysql] renewal under a held fenced commit', () => {
      let fx: BackendFixture;
      let leader: MysqlStore;
      let worker: MysqlStore;
      before(async () => {
        fx = await createBackend('mysql');
        const { host, port, user, password, database } = fx.target as Extract<BackendFixture['target'], { backend: 'mysql' }>;
        leader = MysqlStore.open({ host, port, user, password, database }, 2);
        worker = MysqlStore.open({ host, port, user, password, database }, 2);
      });
      after(async () => {
        await leader.close();
        await worker.close();
        await fx.cleanup();
      });

      test('a commit held open for 3x the TTL: every renewal answers promptly, the term is kept, then the commit commits', async () => {
        const key = 'artifact:held-commit';
        const term = asTerm(key, await leader.acquireTerm(key, 'leader-a', TTL_MS));
        const renewals = renewLoop(leader, term);
        let heldFor = 0;
        try {
          const committed = await worker.fencedTransaction(term, async (tx) => {
            const started = performance.now();
            const marked = await worker.markDirty('held-commit', 'k', tx);
            // The business transaction stays open (fence row locked) for 3 TTLs while renewals go on.
            await new Promise((r) => setTimeout(r, 3 * TTL_MS));
            heldFor = performance.now() - started;
            return marked.dirtyGeneration;
          });
          assert.equal(committed, 1);
        } finally {
          await renewals.stop();
        }
        const slowest = Math.max(...renewals.latencies);
        console.log(
          `held ${heldFor.toFixed(0)} ms; ${renewals.latencies.length} renewals, slowest ${slowest.toFixed(0)} ms; failure: ${String(renewals.failure())}`,
        );
        assert.equal(renewals.failure(), null, `a renewal failed while the commit was held: ${String(renewals.failure())}`);
        assert.ok(
          renewals.latencies.length >= (3 * TTL_MS) / (RENEW_EVERY_MS + PROMPT_MS),
          `only ${renewals.latencies.length} renewals answered in ${heldFor.toFixed(0)} ms`,
        );
        assert.ok(slowest < PROMPT_MS, `a renewal waited ${slowest.toFixed(0)} ms (renewals: ${renewals.latencies.map((l) => l.toFixed(0)).join(', ')})`);
        const lease = await fx.store.readLease(key);
        assert.deepEqual([lease.holderId, lease.supervisorGeneration, lease.live], ['leader-a', term.supervisorGeneration, true], 'the term was kept');
        assert.equal((await fx.store.readIntent('held-commit', 'k'))?.dirtyGeneration, 1, 'the held commit committed under the kept term');
      });

      test('a fenced opening never waits for a renewal in progress (the lease row is read without a lock)', async () => {
        const key = 'artifact:renewal-in-progress';
        const term = asTerm(key, await leader.acquireTerm(key, 'leader-a', 30_000));
        // A renewal's lock on the lease row, held open by hand.
        const renewal = await leader.pool.getConnection();
        try {
          await renewal.query('START TRANSACTION');
          await renewal.query('SELECT expires_at FROM pc_artifact_processing_leases WHERE supervisor_key = ? FOR UPDATE', [key]);
          await renewal.query('UPDATE pc_artifact_processing_leases SET renewed_at = UTC_TIMESTAMP(3) WHERE supervisor_key = ?', [key]);
          const started = performance.now();
          const opened = worker.fencedTransaction(term, (tx) => worker.markDirty('renewal-in-progress', 'k', tx));
          const state = await Promise.race([opened.then(() => 'committed'), new Promise<string>((r) => setTimeout(() => r('waiting'), 2000))]);
          assert.equal(state, 'committed', 'the fenced transaction waited for the lease row lock');
          assert.ok(performance.now() - started < 2000);
        } finally {
          await renewal.query('ROLLBACK');
          renewal.release();
        }
        assert.equal((await fx.store.readIntent('renewal-in-progress', 'k'))?.dirtyGeneration, 1);
      });

      test('a takeover racing an open fenced transaction: it waits for it, the commit lands first, the old term is fenced out after', async () => {
        const key = 'artifact:held-takeover';
        const term = asTerm(key, await leader.acquireTerm(key, 'leader-a', TTL_MS));
        let release!: () => void;
        const released = new Promise<void>((r) => {
          release = r;
        });
        let held!: () => void;
        const isHeld = new Promise<void>((r) => {
          held = r;
        });
        const order: string[] = [];
        const commitP = worker
          .fencedTransaction(term, async (tx) => {
            await worker.markDirty('held-takeover', 'k', tx);
            held();
            await released;
          })
          .then(
            () => {
              order.push('commit');
            },
            (e: unknown) => {
              order.push('refused');
              throw e;
            },
          );
        commitP.catch(() => undefined);
        await isHeld;
        // No renewal: the lease expires by the database clock while the transaction is open.
        await waitFor(async () => !(await fx.store.readLease(key)).live, 10_000, 20);
        const standby = fx.openStore();
        const takeoverP = standby.acquireTerm(key, 'standby-b', 30_000).then((r) => {
          order.push('takeover');
          return r;
        });
        takeoverP.catch(() => undefined);
        // Positive evidence that the takeover waits: its statement writing the fence rows is running
        // (InnoDB's INNODB_TRX snapshot can be stale while it is read often: test/helpers/lock-wait.ts).
        await waitFor(
          async () => {
            assert.deepEqual(order, [], 'nothing settles while the fenced transaction is open');
            const rows = await fx.query(
              `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
          WHERE DB = ? AND COMMAND = 'Query' AND INFO LIKE 'INSERT INTO pc_artifact_processing_lease_fences%'`,
              [(fx.target as { database: string }).database],
            );
            return Number(rows[0].n) >= 1;
          },
          10_000,
          20,
        );
        // Held on for one more TTL with the takeover waiting (showing only that nothing happens meanwhile).
        await new Promise((r) => setTimeout(r, TTL_MS));
        assert.deepEqual(order, [], 'nothing settled while the fenced transaction is open');
        const during = await fx.store.readLease(key);
        assert.deepEqual([during.holderId, during.supervisorGeneration], ['leader-a', term.supervisorGeneration], 'no new term before the held commit ends');
        release();
        await commitP;
        const committedAt = await dbNow(fx);
        const taken = await takeoverP;
        assert.deepEqual(order, ['commit', 'takeover'], 'the held commit lands before the new term, never after it');
        assert.deepEqual([taken.outcome, taken.supervisorGeneration], ['acquired', term.supervisorGeneration + 1]);
        const slack = taken.expiresAt!.getTime() - (committedAt.getTime() + 30_000);
        assert.ok(slack > -200, `the new term's TTL counts from when its takeover could commit, not from before its wait (${slack} ms)`);
        assert.equal((await fx.store.readIntent('held-takeover', 'k'))?.dirtyGeneration, 1);
        await assert.rejects(
          worker.fencedTransaction(term, (tx) => worker.markDirty('held-takeover', 'k', tx)),
          TermLostError,
        );
        await assert.rejects(leader.renewTerm(term, TTL_MS), TermLostError);
        assert.equal((await fx.store.readIntent('held-takeover', 'k'))?.dirtyGeneration, 1, 'the refused write left nothing');
      });
    });
}
