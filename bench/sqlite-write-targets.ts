/**
 * `npx tsx bench/sqlite-write-targets.ts`: the cost of the SQLite engine guard of a fenced
 * transaction's statements (src/store/sqlite/write-targets.ts) per statement, inside one open
 * transaction on a migrated database: a remembered verdict (the usual case: a processor reuses its
 * SQL texts), a new text (compiled on the probe), and a refused PRAGMA (the probe is replaced).
 * Medians of 5 rounds are printed; nothing is asserted.
 */
import { createEphemeralDatabase } from '../src/devtools/ephemeral-database.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { assertSqliteWriteTargets } from '../src/store/sqlite/write-targets.ts';
import { txQuery } from '../src/store/tx-query.ts';

const ROUNDS = 5;
const db0 = await createEphemeralDatabase('sqlite', { prefix: 'apsup-bench-wt' });
const store = SqliteStore.open((db0.target as { file: string }).file);
const db = store.db;
db.exec('CREATE TABLE bench_items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, n INTEGER NOT NULL)');
db.exec("INSERT INTO bench_items (name, n) VALUES ('a', 0)");
db.exec('BEGIN IMMEDIATE');
const sql = 'UPDATE bench_items SET n = n + 1 WHERE name = ?';
let serial = 0;

/** Microseconds per call of f, after a warm-up. */
function perCall(n: number, f: () => void): number {
  for (let i = 0; i < Math.min(200, n); i++) f();
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return Number(process.hrtime.bigint() - t) / 1000 / n;
}

const cases: Array<[string, number, () => void]> = [
  ['the statement alone (txQuery: prepare and run)', 20_000, () => void txQuery(db, sql, ['a'])],
  ['guard, remembered verdict', 20_000, () => assertSqliteWriteTargets(db, sql, ['a'])],
  ['guard + statement', 20_000, () => (assertSqliteWriteTargets(db, sql, ['a']), void txQuery(db, sql, ['a']))],
  [
    'guard, a new text each time (EXPLAIN on the probe)',
    2000,
    () => assertSqliteWriteTargets(db, `UPDATE bench_items SET n = n + ${++serial} WHERE name = ?`, ['a']),
  ],
  [
    'guard, a refused PRAGMA each time (probe reopened)',
    300,
    () => {
      try {
        assertSqliteWriteTargets(db, `PRAGMA cache_size = ${++serial}`);
      } catch {
        /* refused */
      }
    },
  ],
];
for (const [label, n, f] of cases) {
  const rounds = Array.from({ length: ROUNDS }, () => perCall(n, f)).sort((a, b) => a - b);
  console.log(`${label}: ${rounds[Math.floor(ROUNDS / 2)].toFixed(2)} µs (min ${rounds[0].toFixed(2)}, max ${rounds[ROUNDS - 1].toFixed(2)})`);
}
db.exec('ROLLBACK');
await store.close();
await db0.drop();
