// The read handle (src/store/read-handle.ts) on both backends: it reads what is committed, the
// database itself refuses a write that gets past the statement guard, and a closed handle is closed.
import assert from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import { openReadHandle, lazyReadHandle, type ReadHandle } from '../../../src/store/read-handle.ts';
import { createBackend, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  {
    describe(`[${backend}] read handle`, () => {
      let fx: BackendFixture;
      let read: ReadHandle;
      before(async () => {
        fx = await createBackend(backend);
        await fx.query('CREATE TABLE fx_read (a INT NOT NULL)');
        await fx.query('INSERT INTO fx_read (a) VALUES (1)');
        if (backend === 'mysql') {
          await fx.query('CREATE FUNCTION fx_read_write() RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO fx_read (a) VALUES (2); RETURN 1; END');
        }
        read = await openReadHandle(fx.target);
      });
      after(async () => {
        await read?.close();
        await fx?.cleanup();
      });

      test('reads committed rows with bound parameters', async () => {
        assert.deepEqual(
          (await read.query('SELECT a FROM fx_read WHERE a = ?', [1])).map((r) => Number(r.a)),
          [1],
        );
        await fx.query('INSERT INTO fx_read (a) VALUES (3)');
        assert.deepEqual(
          (await read.query('SELECT a FROM fx_read ORDER BY a')).map((r) => Number(r.a)),
          [1, 3],
        );
      });

      test('the database refuses a write that passes the guard', async () => {
        const sql = backend === 'sqlite' ? 'WITH x AS (SELECT 7 AS v) INSERT INTO fx_read (a) SELECT v FROM x' : 'SELECT fx_read_write() AS w';
        // The text checks off: the refusal must come from the database (SQLite: the compiled
        // program's facts; MySQL: the read-only session), not from the statement's text.
        const saved = process.env.APSUP_UNSAFE_DISABLE_TEXT_CHECKS;
        process.env.APSUP_UNSAFE_DISABLE_TEXT_CHECKS = '1';
        try {
          await assert.rejects(read.query(sql), { name: 'ReadOnlyError', code: 'read_only' });
        } finally {
          if (saved === undefined) delete process.env.APSUP_UNSAFE_DISABLE_TEXT_CHECKS;
          else process.env.APSUP_UNSAFE_DISABLE_TEXT_CHECKS = saved;
        }
        assert.deepEqual(await fx.query('SELECT a FROM fx_read WHERE a IN (2, 7)'), []);
        if (backend === 'mysql') {
          const [row] = await read.query('SELECT @@SESSION.tx_read_only AS ro');
          assert.equal(Number(row.ro), 1, 'the session runs its transactions read-only');
        }
      });

      test('an aborted read rejects with the reason; a closed lazy handle refuses', async () => {
        const controller = new AbortController();
        controller.abort(new Error('deadline'));
        await assert.rejects(read.query('SELECT 1 AS one', [], { signal: controller.signal }), /deadline/);
        let opened = 0;
        const lazy = lazyReadHandle(fx.backend, async () => {
          opened += 1;
          return openReadHandle(fx.target);
        });
        assert.equal(lazy.opened(), false);
        await assert.rejects(lazy.query('UPDATE fx_read SET a = 0'), { name: 'ReadOnlyError' });
        assert.equal(opened, 0, 'a refused statement opens no connection');
        assert.equal(Number((await lazy.query('SELECT COUNT(*) AS n FROM fx_read'))[0].n) >= 1, true);
        await lazy.close();
        await assert.rejects(lazy.query('SELECT 1'), { name: 'ReadOnlyError' });
      });

      test('a slow read ends at its abort or bound without blocking the caller (SQLite: in a reader process; MySQL: on the server)', async () => {
        const slow =
          backend === 'sqlite'
            ? 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT COUNT(*) AS n FROM c'
            : // SLEEP() and BENCHMARK() return normally when the server cuts them off: a real join does not.
              'SELECT COUNT(*) AS n FROM information_schema.columns a, information_schema.columns b, information_schema.columns c';
        const handle = await openReadHandle(fx.target, { isolated: true, statementTimeoutMs: 60_000 });
        const delay = monitorEventLoopDelay({ resolution: 10 });
        delay.enable();
        const started = Date.now();
        const controller = new AbortController();
        setTimeout(() => controller.abort(new Error('deadline')), 300);
        await assert.rejects(handle.query(slow, [], { signal: controller.signal }), /deadline/);
        const elapsed = Date.now() - started;
        delay.disable();
        assert.ok(elapsed < 1500, `rejected ${elapsed} ms after the start`);
        // A read that held the loop would hold it past the 300 ms abort; 250 ms leaves room for a loaded machine's scheduling.
        assert.ok(delay.percentile(99) / 1e6 < 250, `event-loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms`);
        assert.deepEqual(
          (await handle.query('SELECT 1 AS one')).map((r) => Number(r.one)),
          [1],
          'the next read is served',
        );
        const bounded = await openReadHandle(fx.target, { isolated: true, statementTimeoutMs: 300 });
        const t0 = Date.now();
        await assert.rejects(bounded.query(slow));
        assert.ok(Date.now() - t0 < 2500, 'the statement bound ended it');
        await bounded.close();
        await handle.close();
      });
    });
  }
}
