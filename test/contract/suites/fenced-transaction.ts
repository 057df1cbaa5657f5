/**
 * Store.fencedTransaction (pc_aps_begin_fenced), on both backends: the processor SDK's ctx.commit
 * shape. The term is asserted before the caller's function runs (on MySQL/OceanBase the opening
 * of the transaction and the check are one call); a lost term raises TermLostError before any
 * write and leaves no transaction open; a failing function rolls back; and (MySQL) the fence lock
 * is held until the commit, so a term change waits for the business transaction.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { TermLostError } from '../../../src/store/errors.ts';
import { MysqlStore } from '../../../src/store/mysql/mysql-store.ts';
import { txQuery } from '../../../src/store/tx-query.ts';
import type { Term } from '../../../src/store/types.ts';
import { createBackend, waitFor, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';
import { takeTerm } from '../../helpers/store-asserts.ts';

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  {
    describe(`[${backend}] fencedTransaction (pc_aps_begin_fenced)`, () => {
      let fx: BackendFixture;
      let term: Term;
      before(async () => {
        fx = await createBackend(backend);
        await fx.query(`CREATE TABLE fx_business (id ${backend === 'sqlite' ? 'INTEGER PRIMARY KEY' : 'BIGINT PRIMARY KEY'}, n BIGINT NOT NULL)`);
        await fx.query('INSERT INTO fx_business (id, n) VALUES (1, 0)');
        term = await takeTerm(fx.store);
      });
      after(async () => {
        await fx.cleanup();
      });

      const n = async () => Number((await fx.query('SELECT n FROM fx_business WHERE id = 1'))[0].n);

      test("a live term: the writes commit and the function's result is returned", async () => {
        const result = await fx.store.fencedTransaction(term, async (tx) => {
          await txQuery(tx, 'UPDATE fx_business SET n = n + 1 WHERE id = 1');
          return 'done';
        });
        assert.equal(result, 'done');
        assert.equal(await n(), 1);
      });

      test('a lost term raises TermLostError before the function runs; nothing is written, no transaction is left open', async () => {
        const before_ = await n();
        let ran = false;
        const stale = { ...term, supervisorGeneration: term.supervisorGeneration + 1 };
        // A store with one connection: the next operation reuses the connection the failure used.
        const t = fx.target as { host: string; port: number; user: string; password: string; database: string };
        const single =
          backend === 'mysql' ? MysqlStore.open({ host: t.host, port: t.port, user: t.user, password: t.password, database: t.database }, 1) : fx.openStore();
        try {
          await assert.rejects(
            single.fencedTransaction(stale, async () => {
              ran = true;
            }),
            TermLostError,
          );
          await assert.rejects(
            single.fencedTransaction({ ...term, holderId: 'someone-else' }, async () => {
              ran = true;
            }),
            TermLostError,
          );
          assert.equal(ran, false, 'the function never ran');
          if (backend === 'mysql') {
            const rows = await single.domainQuery('SELECT @@in_transaction AS open_tx');
            assert.equal(Number(rows[0].open_tx), 0, 'the failed opening left no transaction open on its connection');
          }
          await single.fencedTransaction(term, (tx) => txQuery(tx, 'UPDATE fx_business SET n = n + 10 WHERE id = 1'));
        } finally {
          await single.close();
        }
        assert.equal(await n(), before_ + 10, 'only the fenced write of the live term committed');
      });

      test('a failing function rolls its writes back', async () => {
        const before_ = await n();
        await assert.rejects(
          fx.store.fencedTransaction(term, async (tx) => {
            await txQuery(tx, 'UPDATE fx_business SET n = n + 100 WHERE id = 1');
            throw new Error('business failure');
          }),
          /business failure/,
        );
        assert.equal(await n(), before_);
      });

      if (backend === 'mysql') {
        test('the fence lock is held until the commit: a term change waits for the business transaction', async () => {
          const other = fx.openStore();
          try {
            let release!: () => void;
            const gate = new Promise<void>((resolve) => {
              release = resolve;
            });
            let inside = false;
            const business = fx.store.fencedTransaction(term, async (tx) => {
              await txQuery(tx, 'UPDATE fx_business SET n = 1000 WHERE id = 1');
              inside = true;
              await gate;
            });
            await waitFor(() => inside, 10_000);
            let invalidated = false;
            const change = other.invalidateTerm('global').then((r) => {
              invalidated = true;
              return r;
            });
            // The invalidation needs the fence rows; it must be waiting while the transaction is open.
            await waitFor(async () => {
              const rows = await fx.query(
                "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE '%pc_aps_invalidate_term%' AND COMMAND <> 'Sleep'",
              );
              return Number(rows[0].n) > 0;
            }, 10_000);
            assert.equal(invalidated, false, 'the term change waits for the fenced transaction');
            release();
            await business;
            const r = await change;
            assert.equal(r.supervisorGeneration, term.supervisorGeneration + 1);
            assert.equal(await n(), 1000, 'the business write committed under the live term');
            await assert.rejects(
              fx.store.fencedTransaction(term, async () => undefined),
              TermLostError,
              'the old term is fenced out afterwards',
            );
            term = await takeTerm(fx.store);
          } finally {
            await other.close();
          }
        });
      }
    });
  }
}
