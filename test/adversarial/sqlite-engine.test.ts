// Issue 40 item 3 on SQLite, with the text checks turned off: every attack of sqlite-attacks.ts
// through the processor's path (Store.fencedTransaction on a migrated database, the scoped handle
// ctx.commit gets) and through both read handles (ctx.read's in-process one, the providers'
// reader process). Nothing of pc_* may change, no file may appear, the store's connection keeps
// its settings and its transaction, and ctx.read writes no business row; legitimate business
// writes and reads still work.
//
// Each commit attack also runs on `engineOnly`: the scoped handle's query without its text check
// (the same calls: the engine guard, then the statement), so the proof does not depend on the
// APSUP_UNSAFE_DISABLE_TEXT_CHECKS switch. The attacks the text checks let through prove the
// same through the real handles.
import './text-checks-off.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import type BetterSqlite3 from 'better-sqlite3';
import { withScopedTx } from '../../src/store/scoped-tx.ts';
import { assertSqliteWriteTargets } from '../../src/store/sqlite/write-targets.ts';
import { txQuery } from '../../src/store/tx-query.ts';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { SqliteReadHandle } from '../../src/store/sqlite/sqlite-read-handle.ts';
import { SqliteProcessReadHandle } from '../../src/store/sqlite/sqlite-read-process.ts';
import type { ReadHandle, Term, Tx, TxHandle } from '../../src/store/types.ts';
import type { BaseStore } from '../../src/store/base-store.ts';
import { TaskStore } from '../../src/tasks/task-store.ts';
import { createBackend, type BackendFixture } from '../helpers/backends.ts';
import { takeTerm } from '../helpers/store-asserts.ts';
import {
  BUSINESS_WRITES,
  COMMIT_ATTACKS,
  LEGITIMATE_READS,
  READ_ATTACKS,
  businessState,
  connectionSettings,
  createBusinessTables,
  filesIn,
  inDir,
  ownState,
} from './sqlite-attacks.ts';

interface Seeded {
  fx: BackendFixture;
  db: BetterSqlite3.Database;
  term: Term;
  dir: string;
  file: string;
  cleanup(): Promise<void>;
}

/** A migrated database with business tables, a live term, an intent and a pending task. */
async function seeded(): Promise<Seeded> {
  const fx = await createBackend('sqlite');
  await createBusinessTables(fx);
  const term = await takeTerm(fx.store);
  await fx.store.markDirty('adv', 'scope-1');
  await new TaskStore(fx.store as BaseStore).submit({ taskType: 'adv', handlerVersion: 1, payload: { a: 1 }, timeoutMs: 60_000 });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-adv-'));
  return {
    fx,
    db: (fx.store as SqliteStore).db,
    term,
    dir,
    file: (fx.target as { file: string }).file,
    async cleanup() {
      await fx.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** scopedTx's query on SQLite without its text check: the engine guard, then the statement. */
function engineOnly(raw: TxHandle): Tx {
  return {
    backend: 'sqlite',
    async query(sql: string, params: unknown[] = []) {
      assertSqliteWriteTargets(raw as BetterSqlite3.Database, sql, params);
      return txQuery(raw, sql, params);
    },
  };
}

const PATHS: Array<{ path: string; run<T>(store: SqliteStore, term: Term, fn: (tx: Tx, raw: BetterSqlite3.Database) => Promise<T>): Promise<T> }> = [
  { path: 'the engine alone', run: (store, term, fn) => store.fencedTransaction(term, (raw) => fn(engineOnly(raw), raw as BetterSqlite3.Database)) },
  {
    path: 'ctx.commit (scoped handle)',
    run: (store, term, fn) => store.fencedTransaction(term, (raw) => withScopedTx(raw, 'sqlite', (tx) => fn(tx, raw as BetterSqlite3.Database))),
  },
];

describe('[sqlite] ctx.commit with the text checks off: the engine refuses', () => {
  for (const attack of COMMIT_ATTACKS) {
    test(attack.name, async () => {
      const s = await seeded();
      try {
        const own = ownState(s.db);
        const settings = connectionSettings(s.db);
        for (const { path: via, run } of PATHS) {
          const outcomes = await run(s.fx.store as SqliteStore, s.term, async (tx, raw) => {
            const results: unknown[] = [];
            for (const step of attack.steps) {
              results.push(
                await tx.query(inDir(step, s.dir)).then(
                  () => 'ran',
                  (error: unknown) => error,
                ),
              );
              assert.ok(raw.inTransaction, `${via}: the fenced transaction is still open after: ${step}`);
            }
            return results;
          });
          assert.ok(outcomes[0] instanceof Error, `${via}: the first statement was refused: ${attack.steps[0]}`);
          assert.equal(ownState(s.db), own, `${via}: no pc_* row, sequence, schema object or header cookie changed`);
          assert.deepEqual(connectionSettings(s.db), settings, `${via}: the store's connection kept its settings`);
          assert.deepEqual(filesIn(s.dir), [], `${via}: no file appeared`);
        }
      } finally {
        await s.cleanup();
      }
    });
  }

  test('the refusal names what the engine saw, also for what a text check lets through', async () => {
    const s = await seeded();
    try {
      for (const { run } of PATHS) {
        await run(s.fx.store as SqliteStore, s.term, async (tx) => {
          // Statements whose text names no own table and starts with an allowed keyword.
          await assert.rejects(tx.query("INSERT INTO adv_hooked (v) VALUES ('x')"), {
            name: 'ReadOnlyError',
            message: /the engine's program writes pc_artifact_processing_leases, a table of the supervisor/,
          });
          await assert.rejects(tx.query('DELETE FROM sqlite_sequence'), {
            name: 'ReadOnlyError',
            message: /main\.sqlite_sequence, an internal table of SQLite/,
          });
          await assert.rejects(tx.query('SELECT * FROM pragma_optimize(-1)'), { name: 'ReadOnlyError', message: /PRAGMA optimize/ });
          await assert.rejects(tx.query('EXPLAIN PRAGMA ignore_check_constraints = 1'), { name: 'ReadOnlyError', message: /cannot list the program/ });
        });
      }
      await engineOnly(s.db).query('SELECT 1'); // outside a transaction the guard still answers
      await s.fx.store.fencedTransaction(s.term, async (raw) => {
        const tx = engineOnly(raw);
        await assert.rejects(tx.query('PRAGMA ignore_check_constraints = 1'), { name: 'ReadOnlyError', message: /changes the connection .*\[Expire\]/ });
        await assert.rejects(tx.query('COMMIT'), { name: 'ReadOnlyError', message: /ends or begins the transaction .*\[AutoCommit\]/ });
        await assert.rejects(tx.query('UPDATE adv_nowhere SET n = 1'), { name: 'SqliteError', message: /no such table: adv_nowhere/ });
      });
      assert.equal(s.db.pragma('ignore_check_constraints', { simple: true }), 0);
    } finally {
      await s.cleanup();
    }
  });

  for (const { path: via, run } of PATHS) {
    test(`legitimate business writes still commit through ${via}: INSERT, UPDATE, DELETE, UPSERT, RETURNING, triggers, cascades`, async () => {
      const s = await seeded();
      try {
        const own = ownState(s.db);
        // The text check refuses a write naming an own table; the engine does not (engineOnly).
        const writes = BUSINESS_WRITES.filter((w) => via === 'the engine alone' || !w.ownTableName);
        const rows = await run(s.fx.store as SqliteStore, s.term, async (tx) => {
          const out: Record<string, number> = {};
          for (const w of writes) out[w.name] = (await tx.query(w.sql, w.params ?? [])).length;
          return out;
        });
        for (const w of writes) assert.equal(rows[w.name], w.rows ?? 0, w.name);
        const q = (sql: string) => s.db.prepare(sql).all();
        assert.deepEqual(q('SELECT name, n FROM adv_items ORDER BY name'), [
          { name: 'b1', n: 5 },
          { name: 'b2', n: 7 },
          { name: 'j1', n: 0 },
          { name: 'j2', n: 0 },
          { name: 'seed', n: 0 },
        ]);
        const notes = writes.length === BUSINESS_WRITES.length ? [{ note: 'a' }, { note: 'scope-1' }, { note: 'w' }] : [{ note: 'a' }, { note: 'w' }];
        assert.deepEqual(q('SELECT note FROM adv_log ORDER BY id'), notes);
        assert.deepEqual(q('SELECT v FROM adv_audit'), [{ v: 'x' }], 'the business trigger ran');
        assert.deepEqual(q('SELECT * FROM adv_child'), [], 'the cascade ran');
        assert.deepEqual(q('SELECT * FROM adv_scratch'), []);
        // AUTOINCREMENT moved adv_log's sequence; nothing else of the supervisor's changed.
        const ownAfter = JSON.parse(ownState(s.db)) as Record<string, unknown>;
        const sequences = ownAfter.sqlite_sequence as Array<{ name: string }>;
        assert.deepEqual(
          sequences.find((r) => r.name === 'adv_log'),
          { name: 'adv_log', seq: notes.length },
        );
        ownAfter.sqlite_sequence = sequences.filter((r) => r.name !== 'adv_log');
        assert.deepEqual(ownAfter, JSON.parse(own));
      } finally {
        await s.cleanup();
      }
    });
  }
});

const READ_HANDLES: Array<{ kind: string; open(file: string): ReadHandle }> = [
  { kind: 'ctx.read (in-process read-only connection)', open: (file) => SqliteReadHandle.open(file) },
  { kind: "the providers' reader process", open: (file) => new SqliteProcessReadHandle(file) },
];

for (const { kind, open } of READ_HANDLES) {
  describe(`[sqlite] ${kind} with the text checks off: nothing is written`, () => {
    for (const attack of READ_ATTACKS) {
      test(attack.name, async () => {
        const s = await seeded();
        const reader = open(s.file);
        try {
          const own = ownState(s.db);
          const business = businessState(s.db);
          for (const step of attack.steps) await assert.rejects(reader.query(inDir(step, s.dir)), Error, step);
          assert.equal(ownState(s.db), own, 'no pc_* row changed');
          assert.equal(businessState(s.db), business, 'no business row changed');
          assert.deepEqual(filesIn(s.dir), [], 'no file appeared');
          // A refused PRAGMA may have changed the connection when it compiled: it was replaced.
          assert.deepEqual(await reader.query('SELECT query_only FROM pragma_query_only'), [{ query_only: 1 }]);
        } finally {
          await reader.close();
          await s.cleanup();
        }
      });
    }

    test('what a text check lets through, the engine refuses; a compiled PRAGMA does not outlive its statement', async () => {
      const s = await seeded();
      const reader = open(s.file);
      try {
        const business = businessState(s.db);
        await assert.rejects(reader.query("WITH x AS (SELECT 1) INSERT INTO adv_items (name, n) SELECT 'cte', 1 FROM x"), {
          name: 'ReadOnlyError',
          message: /sqlite3_stmt_readonly/,
        });
        await assert.rejects(reader.query(`SELECT load_extension('${path.join(s.dir, 'x.so')}')`), {
          name: 'ReadOnlyError',
          message: /loads an extension/,
        });
        // The setting applies when the PRAGMA compiles; the EXPLAIN listing runs nothing else.
        assert.ok((await reader.query('EXPLAIN PRAGMA locking_mode = EXCLUSIVE')).length > 0);
        assert.deepEqual(await reader.query('SELECT * FROM pragma_locking_mode'), [{ locking_mode: 'normal' }], 'the connection was replaced');
        assert.equal(businessState(s.db), business);
        assert.deepEqual(filesIn(s.dir), []);
      } finally {
        await reader.close();
        await s.cleanup();
      }
    });

    test('reads still work', async () => {
      const s = await seeded();
      const reader = open(s.file);
      try {
        for (const sql of LEGITIMATE_READS) assert.ok((await reader.query(sql)).length > 0, sql);
        assert.deepEqual(await reader.query('SELECT n FROM adv_items WHERE name = ?', ['seed']), [{ n: 0 }]);
        await assert.rejects(reader.query(`VACUUM INTO '${path.join(s.dir, 'x.db')}'`), { name: 'ReadOnlyError' });
        assert.deepEqual(filesIn(s.dir), []);
      } finally {
        await reader.close();
        await s.cleanup();
      }
    });
  });
}
