// Query plans of the two paging reads that must stay cheap on a large intents table: the scan
// page of pc_aps_admit_scan_page (index ix_pc_api_scan) and the owed-request discovery page of
// pc_aps_list_owed_requests (index ix_pc_api_owed). 20,000 intents over 3 bindings are inserted
// set-based (about 10 % with ordinary work, 5 % owed), statistics are collected, and the plans of
// the statements exactly as the scripts / procedures run them are checked and printed.
//   SQLite:  EXPLAIN QUERY PLAN of the statements of sql/sqlite/<op>.sql.
//   MariaDB: EXPLAIN (and EXPLAIN UPDATE) of the statements of procedures/oceanbase/<op>.sql,
//            taken from the file with their variables replaced by literals, plus the InnoDB
//            handler counters of one real CALL (a page must cost O(page), not O(binding)).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Pool } from 'mysql2/promise';
import { PROCEDURES_DIR } from '../../../src/paths.ts';
import { loadSqliteScript } from '../../../src/store/sqlite/script.ts';
import type { Term } from '../../../src/store/types.ts';
import { createBackend, type BackendFixture } from '../../helpers/backends.ts';
import type { Backend } from '../../../src/store/types.ts';

const TOTAL = 20_000;
const BINDING = 'topic-memory';
const SCAN_GENERATION = 5;
const PAGE = 100;
/** "Far below the table size": a page read may touch at most this many rows. */
const MAX_ROWS = TOTAL / 10;
const TABLE = 'pc_artifact_processing_intents';

// Row i (1..20000): binding by i % 3; ordinary work (dirty > clean) when i % 10 = 0; an owed
// request (requested > handled) when i % 20 = 7; already admitted by the current scan when
// i % 40 = 0. Two recursive CTEs of 200 and 100 rows (MariaDB stops a recursion at 1000).
function loadSql(backend: 'sqlite' | 'mysql'): string {
  const cat = (...parts: string[]) => (backend === 'sqlite' ? parts.join(' || ') : `CONCAT(${parts.join(', ')})`);
  return `INSERT INTO ${TABLE}
      (binding_name, scope_id, dirty_generation, clean_generation, requested_generation, handled_generation,
       last_auto_scan_generation)
    WITH RECURSIVE a(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM a WHERE x < 199),
                   c(y) AS (SELECT 0 UNION ALL SELECT y + 1 FROM c WHERE y < 99),
                   n(i) AS (SELECT x * 100 + y + 1 FROM a CROSS JOIN c)
    SELECT CASE i % 3 WHEN 0 THEN '${BINDING}' WHEN 1 THEN 'profile' ELSE 'experience' END,
           ${cat("'scope-'", 'i')},
           3, CASE WHEN i % 10 = 0 THEN 2 ELSE 3 END,
           2, CASE WHEN i % 20 = 7 THEN 1 ELSE 2 END,
           CASE WHEN i % 40 = 0 THEN ${SCAN_GENERATION} ELSE ${SCAN_GENERATION - 1} END
      FROM n
     ORDER BY i`;
}

async function loadVolume(fx: BackendFixture): Promise<{ upper: number; middle: number; term: Term }> {
  await fx.query(loadSql(fx.backend));
  const [{ upper, n }] = await fx.query(`SELECT MAX(pending_sequence) AS upper, COUNT(*) AS n FROM ${TABLE} WHERE binding_name = ?`, [BINDING]);
  const [{ middle }] = await fx.query(
    `SELECT pending_sequence AS middle FROM ${TABLE} WHERE binding_name = ? ORDER BY pending_sequence LIMIT 1 OFFSET ${Math.floor(Number(n) / 2)}`,
    [BINDING],
  );
  // The binding has a scan of generation SCAN_GENERATION in progress up to its largest sequence.
  await fx.query(
    `INSERT INTO pc_artifact_processing_binding_states (binding_name, scan_generation, scan_in_progress, scan_upper_pending_sequence)
     VALUES (?, ?, 1, ?)`,
    [BINDING, SCAN_GENERATION, Number(upper)],
  );
  await fx.query(fx.backend === 'sqlite' ? 'ANALYZE' : `ANALYZE TABLE ${TABLE}`);
  const [{ total }] = await fx.query(`SELECT COUNT(*) AS total FROM ${TABLE}`);
  assert.equal(Number(total), TOTAL);
  const acquired = await fx.store.acquireTerm('global', 'plan-holder', 600_000);
  return {
    upper: Number(upper),
    middle: Number(middle),
    term: { supervisorKey: 'global', holderId: 'plan-holder', supervisorGeneration: acquired.supervisorGeneration },
  };
}

/** The first `limit` keys a page must admit, computed by plain SQL (assertion only). */
async function expectedAdmission(fx: BackendFixture, upper: number, after: number, limit: number): Promise<number[]> {
  const rows = await fx.query(
    `SELECT pending_sequence FROM ${TABLE}
      WHERE binding_name = ? AND dirty_generation > clean_generation AND pending_sequence > ? AND pending_sequence <= ?
        AND last_auto_scan_generation < ?
      ORDER BY pending_sequence LIMIT ${limit}`,
    [BINDING, after, upper, SCAN_GENERATION],
  );
  return rows.map((r) => Number(r.pending_sequence));
}

async function expectedOwed(fx: BackendFixture, after: number, limit: number): Promise<number[]> {
  const rows = await fx.query(
    `SELECT pending_sequence FROM ${TABLE}
      WHERE binding_name = ? AND requested_generation > handled_generation AND pending_sequence > ?
      ORDER BY pending_sequence LIMIT ${limit}`,
    [BINDING, after],
  );
  return rows.map((r) => Number(r.pending_sequence));
}

// ------------------------------------------------------------------------------------ SQLite

interface EqpRow {
  id: number;
  parent: number;
  detail: string;
}

function formatEqp(rows: EqpRow[]): string {
  const depth = new Map<number, number>([[0, 0]]);
  return rows
    .map((r) => {
      const d = (depth.get(r.parent) ?? 0) + 1;
      depth.set(r.id, d);
      return `${'  '.repeat(d)}${r.detail}`;
    })
    .join('\n');
}

/** The IN (...) subquery of the admission UPDATE of sql/sqlite/pc_aps_admit_scan_page.sql. */
function sqliteAdmissionStatements(): { update: string; subquery: string } {
  const script = loadSqliteScript('pc_aps_admit_scan_page');
  const update = script.statements.find((s) => new RegExp(`^UPDATE\\s+${TABLE}\\b`, 'i').test(s));
  assert.ok(update, 'sql/sqlite/pc_aps_admit_scan_page.sql has an UPDATE of the intents table');
  const open = update.search(/\bIN\s*\(/i);
  assert.ok(open > 0, 'the admission UPDATE selects its page with WHERE ... IN (subquery)');
  const start = update.indexOf('(', open);
  let depth = 0;
  let end = start;
  for (; end < update.length; end += 1) {
    if (update[end] === '(') depth += 1;
    else if (update[end] === ')' && --depth === 0) break;
  }
  const subquery = update.slice(start + 1, end).trim();
  assert.match(subquery, /^SELECT\b[\s\S]*\bLIMIT\b/i);
  return { update, subquery };
}

function assertSqliteIndexRange(plan: EqpRow[], index: string, what: string): void {
  const details = plan.map((r) => r.detail);
  const range = new RegExp(`^SEARCH ${TABLE} USING (?:COVERING )?INDEX ${index} \\(binding_name=\\? AND pending_sequence>\\?`);
  assert.ok(
    details.some((d) => range.test(d)),
    `${what}: expected SEARCH ${TABLE} USING INDEX ${index} (binding_name=? AND pending_sequence>? ...), got:\n${formatEqp(plan)}`,
  );
  assert.ok(!details.some((d) => new RegExp(`^SCAN ${TABLE}\\b`).test(d)), `${what}: full scan of ${TABLE}:\n${formatEqp(plan)}`);
  assert.ok(!details.some((d) => /USE TEMP B-TREE FOR ORDER BY/.test(d)), `${what}: sorts instead of reading the index in order:\n${formatEqp(plan)}`);
}

// ------------------------------------------------------------------------------------ MariaDB

type Literal = string | number | null | { raw: string };

function sqlLiteral(value: Literal): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return `'${value.replace(/'/g, "''")}'`;
  return value.raw;
}

/** Replaces procedure parameters and variables by literals; fails when one is left over. */
function bindProcedureSql(sql: string, values: Record<string, Literal>): string {
  let out = sql;
  for (const [name, value] of Object.entries(values)) out = out.replace(new RegExp(`\\b${name}\\b`, 'g'), sqlLiteral(value));
  const left = out.match(/\b[pv]_[a-z_]+\b/g);
  assert.equal(left, null, `unbound procedure variables ${String(left)} in:\n${out}`);
  return out;
}

/** The statements of a procedure body (split at semicolons; the statements used here contain none in literals). */
function procedureStatements(op: string): string[] {
  const text = fs.readFileSync(path.join(PROCEDURES_DIR, `${op}.sql`), 'utf8');
  const body = text
    .split('\n')
    .filter((l) => !/^\s*--/.test(l))
    .join('\n');
  return body.split(';').map((s) => s.trim().replace(/\s+/g, ' '));
}

/**
 * The one statement of a procedure that matches `pattern`, from the start of the match (so a
 * leading `IF ... THEN` is dropped), with `INTO <variables>` removed so it can be EXPLAINed.
 */
function procedureStatement(op: string, pattern: RegExp, what: string): string {
  const found = procedureStatements(op)
    .map((s) => pattern.exec(s))
    .filter((m): m is RegExpExecArray => m !== null);
  assert.equal(found.length, 1, `procedures/oceanbase/${op}.sql: expected exactly one ${what}, found ${found.length}`);
  const m = found[0];
  return m.input.slice(m.index).replace(/\bINTO\s+[pv]_[a-z_]+(?:\s*,\s*[pv]_[a-z_]+)*\s+(?=FROM\b)/i, '');
}

/** Every statement of a procedure that reads or writes the intents table. */
function intentsStatements(op: string): string[] {
  return procedureStatements(op)
    .map((s) => new RegExp(`\\b(?:SELECT|UPDATE)\\b.*\\b${TABLE}\\b`).exec(s))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => m.input.slice(m.index).replace(/\bINTO\s+[pv]_[a-z_]+(?:\s*,\s*[pv]_[a-z_]+)*\s+(?=FROM\b)/i, ''));
}

interface ExplainRow {
  id: unknown;
  select_type: unknown;
  table: unknown;
  type: unknown;
  possible_keys: unknown;
  key: unknown;
  key_len: unknown;
  ref: unknown;
  rows: unknown;
  Extra: unknown;
}

function formatExplain(rows: ExplainRow[]): string {
  const head = 'id | select_type | table | type | key | key_len | ref | rows | Extra';
  return [
    head,
    ...rows.map((r) =>
      [r.id, r.select_type, r.table, r.type, r.key, r.key_len, r.ref, r.rows, r.Extra].map((v) => (v === null ? 'NULL' : String(v))).join(' | '),
    ),
  ].join('\n');
}

function intentsRow(rows: ExplainRow[], what: string): ExplainRow {
  const row = rows.find((r) => r.table === TABLE);
  assert.ok(row, `${what}: no plan row for ${TABLE}:\n${formatExplain(rows)}`);
  return row;
}

function assertMysqlIndexRange(rows: ExplainRow[], index: string, what: string, options: { noFilesort: boolean } = { noFilesort: true }): ExplainRow {
  const row = intentsRow(rows, what);
  const plan = formatExplain(rows);
  assert.equal(row.key, index, `${what}: expected key ${index}:\n${plan}`);
  assert.ok(row.type === 'range' || row.type === 'ref', `${what}: expected access type range or ref, got ${String(row.type)}:\n${plan}`);
  assert.ok(Number(row.rows) < MAX_ROWS, `${what}: estimated rows ${String(row.rows)} not far below the table size ${TOTAL} (limit ${MAX_ROWS}):\n${plan}`);
  if (options.noFilesort)
    assert.doesNotMatch(String(row.Extra ?? ''), /Using filesort/, `${what}: sorts the range instead of reading the index in order:\n${plan}`);
  return row;
}

/** InnoDB handler counters of one statement on a dedicated connection. */
async function handlerReads(pool: Pool, sql: string, params: unknown[]): Promise<{ reads: number; detail: Record<string, number>; result: unknown }> {
  const conn = await pool.getConnection();
  try {
    const counters = async () => {
      const [rows] = await conn.query("SHOW SESSION STATUS LIKE 'Handler_read%'");
      return Object.fromEntries((rows as Array<{ Variable_name: string; Value: string }>).map((r) => [r.Variable_name, Number(r.Value)]));
    };
    const before = await counters();
    const [result] = await conn.query(sql, params);
    const afterCounts = await counters();
    const detail: Record<string, number> = {};
    for (const [k, v] of Object.entries(afterCounts)) if (v !== before[k]) detail[k] = v - (before[k] ?? 0);
    const reads = [
      'Handler_read_key',
      'Handler_read_next',
      'Handler_read_prev',
      'Handler_read_rnd',
      'Handler_read_rnd_next',
      'Handler_read_first',
      'Handler_read_last',
    ].reduce((s, k) => s + (detail[k] ?? 0), 0);
    return { reads, detail, result };
  } finally {
    conn.release();
  }
}

function lastRows(result: unknown): Array<Record<string, unknown>> {
  const sets = (result as unknown[]).filter((x) => Array.isArray(x)) as Array<Array<Record<string, unknown>>>;
  return sets.length > 0 ? sets[sets.length - 1] : [];
}

// ------------------------------------------------------------------------------------ tests

/** Registers this file's part of the contract for one backend (entries: test/contract/sqlite.test.ts, mysql.test.ts). */
export function register(backend: Backend): void {
  {
    describe(`[${backend}] query plans: scan page and owed-request page are index range reads (${TOTAL} intents)`, () => {
      let fx: BackendFixture;
      let upper = 0;
      let middle = 0;
      let term: Term;

      before(async () => {
        fx = await createBackend(backend);
        ({ upper, middle, term } = await loadVolume(fx));
      });
      after(async () => {
        await fx?.cleanup();
      });

      if (backend === 'sqlite') {
        const params = (afterSequence: number, exclude: string | null) => ({
          supervisor_key: 'global',
          holder_id: 'plan-holder',
          supervisor_generation: 1,
          binding_name: BINDING,
          scan_generation: SCAN_GENERATION,
          after_sequence: afterSequence,
          page_limit: PAGE,
          exclude_scope_ids: exclude,
        });

        test('admission subquery of pc_aps_admit_scan_page: SEARCH ... USING INDEX ix_pc_api_scan', async () => {
          const { subquery } = sqliteAdmissionStatements();
          for (const [afterSequence, exclude] of [
            [0, null],
            [0, 'scope-30,scope-60'],
            [middle, 'scope-30'],
          ] as const) {
            const plan = (await fx.query(`EXPLAIN QUERY PLAN ${subquery}`, [params(afterSequence, exclude)])) as unknown as EqpRow[];
            console.log(`[sqlite] EXPLAIN QUERY PLAN admission subquery (after=${afterSequence}, exclude=${exclude}):\n${subquery}\n--\n${formatEqp(plan)}\n`);
            assertSqliteIndexRange(plan, 'ix_pc_api_scan', 'admission subquery');
          }
        });

        test('admission UPDATE of pc_aps_admit_scan_page: rowid lookups of the page found through ix_pc_api_scan', async () => {
          const { update } = sqliteAdmissionStatements();
          const plan = (await fx.query(`EXPLAIN QUERY PLAN ${update}`, [params(0, 'scope-30')])) as unknown as EqpRow[];
          console.log(`[sqlite] EXPLAIN QUERY PLAN admission UPDATE:\n${formatEqp(plan)}\n`);
          assertSqliteIndexRange(plan, 'ix_pc_api_scan', 'admission UPDATE');
          assert.ok(
            plan.some((r) => new RegExp(`^SEARCH ${TABLE} USING INTEGER PRIMARY KEY \\(rowid=\\?\\)`).test(r.detail)),
            `admission UPDATE: expected the page rows to be updated by rowid:\n${formatEqp(plan)}`,
          );
        });

        test('every statement of sql/sqlite/pc_aps_admit_scan_page.sql on the intents table is a range read on ix_pc_api_scan', async () => {
          const statements = loadSqliteScript('pc_aps_admit_scan_page').statements.filter((st) => new RegExp(`\\b${TABLE}\\b`).test(st));
          assert.ok(statements.length >= 1);
          for (const statement of statements) {
            const plan = (await fx.query(`EXPLAIN QUERY PLAN ${statement}`, [params(middle, 'scope-30')])) as unknown as EqpRow[];
            const head = statement.split('\n')[0];
            console.log(`[sqlite] EXPLAIN QUERY PLAN pc_aps_admit_scan_page statement "${head} ...":\n${formatEqp(plan)}\n`);
            assertSqliteIndexRange(plan, 'ix_pc_api_scan', `statement "${head} ..."`);
          }
        });

        test('pc_aps_list_owed_requests: SEARCH ... USING INDEX ix_pc_api_owed', async () => {
          const script = loadSqliteScript('pc_aps_list_owed_requests');
          const select = script.statements.filter((s) => /^SELECT\b/i.test(s));
          assert.equal(select.length, 1);
          for (const afterSequence of [0, middle]) {
            const plan = (await fx.query(`EXPLAIN QUERY PLAN ${select[0]}`, [
              { binding_name: BINDING, after_sequence: afterSequence, page_limit: PAGE },
            ])) as unknown as EqpRow[];
            console.log(`[sqlite] EXPLAIN QUERY PLAN pc_aps_list_owed_requests (after=${afterSequence}):\n${select[0]}\n--\n${formatEqp(plan)}\n`);
            assertSqliteIndexRange(plan, 'ix_pc_api_owed', 'owed-request page');
          }
        });

        test('pc_aps_list_dirty_keys: SEARCH ... USING INDEX ix_pc_api_scan', async () => {
          const select = loadSqliteScript('pc_aps_list_dirty_keys').statements.filter((s) => /^SELECT\b/i.test(s));
          assert.equal(select.length, 1);
          for (const afterSequence of [0, middle]) {
            const plan = (await fx.query(`EXPLAIN QUERY PLAN ${select[0]}`, [
              { binding_name: BINDING, after_sequence: afterSequence, page_limit: PAGE },
            ])) as unknown as EqpRow[];
            console.log(`[sqlite] EXPLAIN QUERY PLAN pc_aps_list_dirty_keys (after=${afterSequence}):\n${formatEqp(plan)}\n`);
            assertSqliteIndexRange(plan, 'ix_pc_api_scan', 'dirty-key page');
          }
        });
      } else {
        const OP = 'pc_aps_admit_scan_page';
        const admitValues = (afterSequence: number, limit: number, pageLast: number): Record<string, Literal> => ({
          p_binding_name: BINDING,
          p_scan_generation: SCAN_GENERATION,
          p_after_sequence: afterSequence,
          v_upper: upper,
          v_exclude: 'scope-30,scope-60',
          p_page_limit: limit,
          v_page: 1,
          v_now: { raw: 'UTC_TIMESTAMP(3)' },
          v_page_last: pageLast,
        });
        /** The largest pending_sequence of the page of `limit` candidates after `afterSequence`. */
        const pageLast = async (afterSequence: number, limit: number) => {
          const seqs = await expectedAdmission(fx, upper, afterSequence, limit);
          assert.equal(seqs.length, limit, 'the volume has a full page of candidates');
          return seqs[seqs.length - 1];
        };
        const explain = async (sql: string) => (await fx.query(`EXPLAIN ${sql}`)) as unknown as ExplainRow[];

        test('page selection of pc_aps_admit_scan_page (SELECT ... ORDER BY pending_sequence LIMIT p_page_limit): range on ix_pc_api_scan, in index order', async () => {
          const select = procedureStatement(OP, /\bSELECT\b.*\bLIMIT p_page_limit\b/, 'page selection (SELECT ... LIMIT p_page_limit)');
          const first = bindProcedureSql(select, admitValues(0, PAGE, await pageLast(0, PAGE)));
          const plan = await explain(first);
          console.log(`[mysql] EXPLAIN page selection of ${OP} (first page):\n${first}\n--\n${formatExplain(plan)}\n`);
          const firstRow = assertMysqlIndexRange(plan, 'ix_pc_api_scan', 'page selection');

          // A later page starts at its cursor: the range bound on pending_sequence is used.
          const later = bindProcedureSql(select, admitValues(middle, PAGE, await pageLast(middle, PAGE)));
          const planLater = await explain(later);
          console.log(`[mysql] EXPLAIN page selection of ${OP} (page after ${middle}):\n${formatExplain(planLater)}\n`);
          const laterRow = assertMysqlIndexRange(planLater, 'ix_pc_api_scan', 'page selection, later page');
          assert.ok(
            Number(laterRow.rows) < Number(firstRow.rows),
            `the cursor does not narrow the range (${String(laterRow.rows)} >= ${String(firstRow.rows)} rows)`,
          );
        });

        test('EXPLAIN UPDATE of the admission UPDATE ... ORDER BY pending_sequence LIMIT p_page_limit: range on ix_pc_api_scan, bounded by the page', async () => {
          const statement = procedureStatement(OP, new RegExp(`\\bUPDATE ${TABLE}\\b`), `UPDATE ${TABLE}`);
          // The page is strictly bounded by its limit (COMPATIBILITY row 5), and the range predicate stays.
          assert.match(statement, /\bpending_sequence <= v_page_last\b.*\bORDER BY pending_sequence LIMIT p_page_limit$/);
          const update = bindProcedureSql(statement, admitValues(0, PAGE, await pageLast(0, PAGE)));
          const plan = await explain(update);
          console.log(`[mysql] EXPLAIN UPDATE admission of ${OP} (first page of ${PAGE}):\n${update}\n--\n${formatExplain(plan)}\n`);
          // MariaDB may sort for UPDATE ... ORDER BY ... LIMIT; the range bounds that sort to one page.
          const row = assertMysqlIndexRange(plan, 'ix_pc_api_scan', 'EXPLAIN UPDATE admission', { noFilesort: false });
          assert.ok(
            Number(row.rows) <= 4 * PAGE,
            `the admission UPDATE reads (and sorts at most) ${String(row.rows)} rows for a page of ${PAGE}:\n${formatExplain(plan)}`,
          );
        });

        for (const [what, pattern] of [
          ['admitted-rows SELECT', /\bSELECT scope_id\b.*\blast_auto_scan_page = v_page\b/],
          ['admitted count (limit reached?)', /\bSELECT COUNT\(\*\), MAX\(pending_sequence\).*\blast_auto_scan_page = v_page\b/],
        ] as const) {
          test(`the ${what} of pc_aps_admit_scan_page: range on ix_pc_api_scan, bounded by the page`, async () => {
            const select = procedureStatement(OP, pattern, what);
            const bound = bindProcedureSql(select, admitValues(0, PAGE, await pageLast(0, PAGE)));
            const plan = await explain(bound);
            console.log(`[mysql] EXPLAIN ${what} of ${OP} (first page of ${PAGE}):\n${bound}\n--\n${formatExplain(plan)}\n`);
            const row = assertMysqlIndexRange(plan, 'ix_pc_api_scan', what);
            assert.ok(Number(row.rows) <= 4 * PAGE, `the ${what} reads ${String(row.rows)} rows for a page of ${PAGE}:\n${formatExplain(plan)}`);
          });
        }

        test('no statement of pc_aps_admit_scan_page on the intents table scans the table or sorts more than one page', async () => {
          const statements = intentsStatements(OP);
          assert.ok(statements.length >= 3, `expected the page selection, the UPDATE and the result SELECT, found ${statements.length}`);
          const values = admitValues(0, PAGE, await pageLast(0, PAGE));
          for (const statement of statements) {
            const plan = await explain(bindProcedureSql(statement, values));
            const row = intentsRow(plan, statement.slice(0, 60));
            const where = `${statement.slice(0, 80)} ...:\n${formatExplain(plan)}`;
            assert.ok(row.key !== null && row.type !== 'ALL' && row.type !== 'index', `table or full index scan: ${where}`);
            const sorts = plan.some((r) => /Using filesort/.test(String(r.Extra ?? '')) && r.table === TABLE);
            // Only the bounded UPDATE ... ORDER BY ... LIMIT may sort, and only the page's range.
            assert.ok(!sorts || (/^UPDATE\b/.test(statement) && Number(row.rows) <= 4 * PAGE), `sorts: ${where}`);
            assert.ok(Number(row.rows) < MAX_ROWS, `${String(row.rows)} rows: ${where}`);
          }
        });

        test('one CALL pc_aps_admit_scan_page of 10 keys reads O(page) rows (InnoDB handler counters)', async () => {
          const limit = 10;
          const expected = await expectedAdmission(fx, upper, 0, limit);
          const { reads, detail, result } = await handlerReads(
            (fx.store as unknown as { pool: Pool }).pool,
            'CALL pc_aps_admit_scan_page(?, ?, ?, ?, ?, ?, ?, ?)',
            [term.supervisorKey, term.holderId, term.supervisorGeneration, BINDING, SCAN_GENERATION, 0, limit, null],
          );
          console.log(`[mysql] handler reads of CALL ${OP}(limit ${limit}) on ${TOTAL} intents: ${reads} ${JSON.stringify(detail)}\n`);
          assert.deepEqual(
            lastRows(result).map((r) => Number(r.pending_sequence)),
            expected,
            'the call admitted the expected page',
          );
          assert.ok(reads <= 6 * limit + 40, `one page of ${limit} keys read ${reads} rows/index entries ${JSON.stringify(detail)}`);
        });

        test('pc_aps_list_owed_requests: range on ix_pc_api_owed, in index order; a CALL reads O(page) rows', async () => {
          const select = procedureStatement('pc_aps_list_owed_requests', new RegExp(`\\bSELECT .* FROM ${TABLE} WHERE`), 'SELECT of the owed keys');
          for (const afterSequence of [0, middle]) {
            const bound = bindProcedureSql(select, { p_binding_name: BINDING, p_after_sequence: afterSequence, p_page_limit: PAGE });
            const plan = await explain(bound);
            console.log(`[mysql] EXPLAIN pc_aps_list_owed_requests (after=${afterSequence}):\n${bound}\n--\n${formatExplain(plan)}\n`);
            assertMysqlIndexRange(plan, 'ix_pc_api_owed', 'owed-request page');
          }
          const limit = 10;
          const { reads, detail, result } = await handlerReads((fx.store as unknown as { pool: Pool }).pool, 'CALL pc_aps_list_owed_requests(?, ?, ?)', [
            BINDING,
            middle,
            limit,
          ]);
          console.log(`[mysql] handler reads of CALL pc_aps_list_owed_requests(limit ${limit}): ${reads} ${JSON.stringify(detail)}\n`);
          assert.deepEqual(
            lastRows(result).map((r) => Number(r.pending_sequence)),
            await expectedOwed(fx, middle, limit),
          );
          assert.ok(reads <= 6 * limit + 40, `one owed page of ${limit} keys read ${reads} rows/index entries ${JSON.stringify(detail)}`);
        });

        test('pc_aps_list_dirty_keys: range on ix_pc_api_scan; a CALL reads O(page) rows', async () => {
          const select = procedureStatement('pc_aps_list_dirty_keys', new RegExp(`\\bSELECT .* FROM ${TABLE} WHERE`), 'SELECT of the dirty keys');
          for (const afterSequence of [0, middle]) {
            const bound = bindProcedureSql(select, { p_binding_name: BINDING, p_after_sequence: afterSequence, p_page_limit: PAGE });
            const plan = await explain(bound);
            console.log(`[mysql] EXPLAIN pc_aps_list_dirty_keys (after=${afterSequence}):\n${formatExplain(plan)}\n`);
            assertMysqlIndexRange(plan, 'ix_pc_api_scan', 'dirty-key page');
          }
          const limit = 10;
          const { reads, detail, result } = await handlerReads((fx.store as unknown as { pool: Pool }).pool, 'CALL pc_aps_list_dirty_keys(?, ?, ?)', [
            BINDING,
            middle,
            limit,
          ]);
          assert.equal(lastRows(result).length, limit);
          assert.ok(reads <= 6 * limit + 40, `one dirty page of ${limit} keys read ${reads} rows/index entries ${JSON.stringify(detail)}`);
        });
      }

      // The statements whose plans are checked above are the ones that run: at this volume a page
      // through the store returns exactly the keys plain SQL says it must.
      test('at this volume the store pages return the expected keys', async () => {
        const expectedOwedPage = await expectedOwed(fx, middle, 50);
        const owed = await fx.store.listOwedRequests(BINDING, middle, 50);
        assert.deepEqual(
          owed.keys.map((k) => k.pendingSequence),
          expectedOwedPage,
        );
        assert.equal(owed.keys.length, 50);

        const want = await expectedAdmission(fx, upper, middle, 25);
        assert.equal(want.length, 25);
        const page = await fx.store.admitScanPage(term, BINDING, SCAN_GENERATION, middle, 25, ['scope-nonexistent']);
        assert.deepEqual(
          page.keys.map((k) => k.pendingSequence),
          want,
        );
        assert.ok(page.keys.every((k) => k.dirtyGeneration > k.cleanGeneration && k.requestedGeneration > k.handledGeneration));
      });
    });
  }
}
