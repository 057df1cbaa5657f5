// MySQL/OceanBase fence slots (migration 0007): fenced transactions on connections of different
// slots hold their assertion locks at the same time; a takeover still waits for every one of them
// and fences them out once it commits. Since 0015 fence rows carry holder and generation only
// (a renewal writes the lease row alone).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { PoolConnection } from 'mysql2/promise';
import { TermLostError } from '../../../src/store/errors.ts';
import type { MysqlStore } from '../../../src/store/mysql/mysql-store.ts';
import { createBackend, waitFor, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';
import { ownTrxId, waitForBlockedStatement, waitForWaitOn } from '../../helpers/lock-wait.ts';

async function slotOf(conn: PoolConnection): Promise<number> {
  const [rows] = await conn.query('SELECT CONNECTION_ID() MOD 32 AS slot');
  return Number((rows as Array<{ slot: number }>)[0].slot);
}

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  if (backend === 'mysql')
    describe('[mysql] fence slots', () => {
      let fx: BackendFixture;
      before(async () => {
        fx = await createBackend('mysql');
      });
      after(async () => {
        await fx.cleanup();
      });

      test("every term change keeps 32 fence rows at the lease row's holder and generation; expiry lives on the lease row only", async () => {
        const a = await fx.store.acquireTerm('artifact:slots', 'holder-a', 60_000);
        const check = async (holder: string | null, generation: number) => {
          const rows = await fx.query('SELECT holder_id, supervisor_generation, expires_at FROM pc_artifact_processing_lease_fences WHERE supervisor_key = ?', [
            'artifact:slots',
          ]);
          const lease = (
            await fx.query('SELECT holder_id, supervisor_generation FROM pc_artifact_processing_leases WHERE supervisor_key = ?', ['artifact:slots'])
          )[0];
          assert.equal(rows.length, 32);
          assert.deepEqual([lease.holder_id, Number(lease.supervisor_generation)], [holder, generation]);
          for (const r of rows) assert.deepEqual([r.holder_id, Number(r.supervisor_generation), r.expires_at], [holder, generation, null]);
        };
        await check('holder-a', a.supervisorGeneration);
        const renewed = await fx.store.renewTerm(
          { supervisorKey: 'artifact:slots', holderId: 'holder-a', supervisorGeneration: a.supervisorGeneration },
          90_000,
        );
        assert.ok(renewed.expiresAt!.getTime() > a.expiresAt!.getTime());
        await check('holder-a', a.supervisorGeneration);
        // The live holder acquiring again extends the lease row only, like a renewal.
        assert.equal((await fx.store.acquireTerm('artifact:slots', 'holder-a', 90_000)).outcome, 'renewed');
        await check('holder-a', a.supervisorGeneration);
        const inv = await fx.store.invalidateTerm('artifact:slots');
        await check(null, inv.supervisorGeneration);
      });

      test('fenced transactions of two slots run concurrently; a takeover waits for both and fences them out', async () => {
        const store = fx.store as MysqlStore;
        const lease = await store.acquireTerm('global', 'holder-a', 2000);
        const term = { supervisorKey: 'global', holderId: 'holder-a', supervisorGeneration: lease.supervisorGeneration };
        // Two pooled connections on different slots.
        const conns: PoolConnection[] = [];
        const spare: PoolConnection[] = [];
        while (conns.length < 2) {
          const c = await store.pool.getConnection();
          if (conns.length === 1 && (await slotOf(c)) === (await slotOf(conns[0]))) spare.push(c);
          else conns.push(c);
        }
        try {
          for (const c of conns) {
            await c.query('START TRANSACTION');
            await store.assertTerm(c, term); // the second would block here if both used one row
            await store.markDirty('slots', `k-${await slotOf(c)}`, c);
          }
          // Let the lease expire, then a takeover must wait for both open fenced transactions.
          await waitFor(async () => !(await store.readLease('global')).live, 10_000);
          const other = fx.openStore();
          let settled = false;
          const takeover = other.acquireTerm('global', 'holder-b', 60_000).finally(() => {
            settled = true;
          });
          await waitForBlockedStatement(fx); // positive evidence that it waits, not a pause
          assert.equal(settled, false, 'the takeover waits for the fenced transactions');
          const second = await ownTrxId(conns[1]);
          await conns[0].query('COMMIT');
          // Evidence that the takeover now waits for the second fenced transaction's lock.
          const seen = await waitForWaitOn(fx, second, () => settled);
          assert.equal(settled, false, `the takeover still waits for the second fenced transaction (its wait ${seen})`);
          await conns[1].query('COMMIT');
          const b = await takeover;
          assert.equal(b.outcome, 'acquired');
          assert.equal(b.supervisorGeneration, term.supervisorGeneration + 1);
          for (const c of conns) {
            await c.query('START TRANSACTION');
            await assert.rejects(store.assertTerm(c, term), (e: unknown) => e instanceof TermLostError);
            await c.query('ROLLBACK');
          }
        } finally {
          for (const c of [...conns, ...spare]) c.release();
        }
      });
    });
}
