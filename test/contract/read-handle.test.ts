// The read handle (src/store/read-handle.ts) on both backends: it reads what is committed, the
// database itself refuses a write that gets past the statement guard, and a closed handle is closed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openReadHandle, lazyReadHandle, type ReadHandle } from '../../src/store/read-handle.ts';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';

for (const backend of BACKENDS) {
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
      assert.deepEqual((await read.query('SELECT a FROM fx_read WHERE a = ?', [1])).map((r) => Number(r.a)), [1]);
      await fx.query('INSERT INTO fx_read (a) VALUES (3)');
      assert.deepEqual((await read.query('SELECT a FROM fx_read ORDER BY a')).map((r) => Number(r.a)), [1, 3]);
    });

    test('the database refuses a write that passes the guard', async () => {
      const sql = backend === 'sqlite' ? 'WITH x AS (SELECT 7 AS v) INSERT INTO fx_read (a) SELECT v FROM x' : 'SELECT fx_read_write() AS w';
      await assert.rejects(read.query(sql), { name: 'ReadOnlyError', code: 'read_only' });
      assert.deepEqual((await fx.query('SELECT a FROM fx_read WHERE a IN (2, 7)')), []);
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
      const lazy = lazyReadHandle(fx.backend, async () => { opened += 1; return openReadHandle(fx.target); });
      assert.equal(lazy.opened(), false);
      await assert.rejects(lazy.query('UPDATE fx_read SET a = 0'), { name: 'ReadOnlyError' });
      assert.equal(opened, 0, 'a refused statement opens no connection');
      assert.equal(Number((await lazy.query('SELECT COUNT(*) AS n FROM fx_read'))[0].n) >= 1, true);
      await lazy.close();
      await assert.rejects(lazy.query('SELECT 1'), { name: 'ReadOnlyError' });
    });
  });
}
