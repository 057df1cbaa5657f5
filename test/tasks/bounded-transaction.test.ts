// boundedTransaction (src/tasks/bounded-transaction.ts) on both backends: a callback that hangs
// past its bound is rolled back at the bound, the store serves other work right away (on SQLite
// its single connection), the abandoned callback's later statements are refused, and on MySQL a
// statement still waiting for a lock on the server is ended so its locks go too.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { BaseStore } from '../../src/store/base-store.ts';
import { txQuery } from '../../src/store/tx-query.ts';
import { boundedTransaction, TransactionBoundError } from '../../src/tasks/bounded-transaction.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';

for (const backend of BACKENDS) {
  describe(`bounded transaction (${backend})`, () => {
    const fixtures: BackendFixture[] = [];
    after(async () => {
      for (const fx of fixtures.splice(0)) await fx.cleanup();
    });
    async function fresh(): Promise<BackendFixture> {
      const fx = await createBackend(backend, { migrate: false });
      fixtures.push(fx);
      await fx.query('CREATE TABLE bt_rows (id INT NOT NULL PRIMARY KEY, v INT NOT NULL)');
      await fx.query('INSERT INTO bt_rows (id, v) VALUES (1, 0), (2, 0)');
      return fx;
    }

    test('a hanging callback is rolled back at its bound; its late statements are refused', async () => {
      const fx = await fresh();
      const store = fx.store as BaseStore;
      let release!: () => void;
      const hang = new Promise<void>((r) => {
        release = r;
      });
      let late: unknown = null;
      const started = Date.now();
      await assert.rejects(
        boundedTransaction(store, 300, async (_tx, guarded) => {
          await txQuery(guarded, 'UPDATE bt_rows SET v = 1 WHERE id = 1');
          await hang;
          await txQuery(guarded, 'UPDATE bt_rows SET v = 2 WHERE id = 2').then(
            () => {
              late = 'ran';
            },
            (e: unknown) => {
              late = e;
            },
          );
        }),
        TransactionBoundError,
      );
      assert.ok(Date.now() - started < 3000, 'rejected at the bound');
      // The store serves the next transaction at once (SQLite: its one connection is free again).
      await store.transaction(async (tx) => {
        await txQuery(tx, 'UPDATE bt_rows SET v = 5 WHERE id = 2');
      });
      release();
      await waitFor(() => late !== null, 5000); // the abandoned callback's statement has an answer
      assert.match(String((late as Error)?.message), /closed/, 'the abandoned callback was refused');
      const rows = await fx.query('SELECT id, v FROM bt_rows ORDER BY id');
      assert.deepEqual(
        rows.map((r) => Number(r.v)),
        [0, 5],
        'its first write rolled back, its late write never ran',
      );
    });

    if (backend === 'mysql') {
      test('a callback stuck in a server-side lock wait is ended with its connection: its row locks are released at the bound', async () => {
        const fx = await fresh();
        const store = fx.store as BaseStore;
        const holder = fx.openStore() as BaseStore;
        let held!: () => void;
        let locked!: () => void;
        const rowLocked = new Promise<void>((r) => {
          locked = r;
        });
        const holding = holder.transaction(async (tx) => {
          await txQuery(tx, 'UPDATE bt_rows SET v = 9 WHERE id = 2');
          locked();
          await new Promise<void>((r) => {
            held = r;
          });
        });
        // The holder's row lock is taken before the bounded callback starts (a fixed wait lost this on a loaded machine).
        await rowLocked;
        await assert.rejects(
          boundedTransaction(store, 500, async (_tx, guarded) => {
            await txQuery(guarded, 'UPDATE bt_rows SET v = 1 WHERE id = 1'); // locks row 1
            await txQuery(guarded, 'UPDATE bt_rows SET v = 1 WHERE id = 2'); // waits for the holder
          }),
          TransactionBoundError,
        );
        // Row 1 must be free now, not when the server's lock wait (50 s by default) gives up.
        const other = fx.openStore() as BaseStore;
        await other.transaction(async (tx) => {
          await txQuery(tx, 'SET SESSION innodb_lock_wait_timeout = 3');
          await txQuery(tx, 'UPDATE bt_rows SET v = 7 WHERE id = 1');
        });
        held();
        await holding;
        assert.deepEqual(
          (await fx.query('SELECT v FROM bt_rows ORDER BY id')).map((r) => Number(r.v)),
          [7, 9],
        );
      });
    }
  });
}
