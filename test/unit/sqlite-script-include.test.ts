import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expandIncludes } from '../../src/store/sqlite/script-include.ts';
import { loadSqliteScript, sqliteScriptText } from '../../src/store/sqlite/script.ts';

function reader(files: Record<string, string>) {
  return (name: string) => {
    if (!(name in files)) throw new Error(`ENOENT ${name}`);
    return files[name];
  };
}

describe('SQLite script includes', () => {
  it('expands includes recursively, in place', () => {
    const read = reader({ a: 'A1;\n-- @include b\nA2;', b: 'B1;\n-- @include c', c: 'C1;' });
    assert.equal(expandIncludes('a', read), 'A1;\nB1;\nC1;\nA2;');
  });

  it('refuses a cycle and names it', () => {
    const read = reader({ a: '-- @include b', b: '-- @include c', c: '-- @include a' });
    assert.throws(() => expandIncludes('a', read), /@include cycle a -> b -> c -> a/);
    assert.throws(() => expandIncludes('s', reader({ s: '-- @include s' })), /@include cycle s -> s/);
  });

  it('an included fast path (-- @done-if-rows) must be the last statements of its includer; COMMIT may follow', () => {
    const fast = 'INSERT INTO s VALUES (1);\n-- @done-if-rows\nUPDATE t SET x = 1 RETURNING x;\nSELECT 2;';
    assert.equal(expandIncludes('a', reader({ a: 'BEGIN IMMEDIATE;\n-- @include f\nCOMMIT;', f: fast })), `BEGIN IMMEDIATE;\n${fast}\nCOMMIT;`);
    assert.throws(() => expandIncludes('a', reader({ a: '-- @include f\nSELECT 3;', f: fast })), /statements follow the include of f/);
    assert.throws(() => expandIncludes('a', reader({ a: '-- @include f\n-- @include g', f: fast, g: 'SELECT 4;' })), /statements follow the include of f/);
    // Text that only names the marker is no marker.
    assert.doesNotThrow(() => expandIncludes('a', reader({ a: '-- @include f\nSELECT 3;', f: '-- see `-- @done-if-rows`\nSELECT 1;' })));
  });

  it('refuses an include line it cannot expand', () => {
    for (const line of ['-- @include', '-- @include Bad-Name', 'SELECT 1; -- @include b', '--@include b c']) {
      assert.throws(() => expandIncludes('a', reader({ a: `X;\n${line}\n`, b: 'B;' })), /unexpanded include line/, line);
    }
  });

  it('binds one parameter of the included text to an expression of the includer', () => {
    const read = reader({
      a: 'A;\n-- @include b n=min(:n, (SELECT 2))\nZ;',
      b: 'SELECT :n, :nn, :other;\nSELECT :n;',
      c: '-- @include b n=1',
      d: '-- @include b missing=1',
    });
    assert.equal(expandIncludes('a', read), 'A;\nSELECT (min(:n, (SELECT 2))), :nn, :other;\nSELECT (min(:n, (SELECT 2)));\nZ;');
    assert.equal(expandIncludes('c', read), 'SELECT (1), :nn, :other;\nSELECT (1);');
    assert.throws(() => expandIncludes('d', read), /binds :missing, which b does not use/);
  });

  it('the shipped claim scripts share one body: pc_task_claim binds :max_count to 1, pc_task_succeed_batch to the successes written', () => {
    const body = sqliteScriptText('pc_aps_task_claim_rows');
    assert.ok(sqliteScriptText('pc_task_claim').includes(body.replaceAll(':max_count', '(1)')));
    assert.ok(sqliteScriptText('pc_task_claim_batch').includes(body));
    assert.match(
      sqliteScriptText('pc_task_succeed_batch'),
      /LIMIT max\(0, min\(\(min\(:max_count, \(SELECT COUNT\(\*\) FROM pc_task_succeed_batch_items WHERE outcome = 'succeeded'\)\)\)/,
    );
  });

  it('refuses a missing script and one that owns a transaction', () => {
    assert.throws(() => expandIncludes('a', reader({ a: '-- @include nope' })), /nope\.sql cannot be read \(included by a\)/);
    assert.throws(() => expandIncludes('a', reader({ a: '-- @include t', t: 'BEGIN IMMEDIATE;\nSELECT 1;\nCOMMIT;' })), /includes t, which owns a transaction/);
    // Also when the transaction is owned deeper down the chain.
    assert.throws(() => expandIncludes('a', reader({ a: '-- @include b', b: '-- @include t', t: 'BEGIN IMMEDIATE;\nCOMMIT;' })), /owns a transaction/);
  });

  it('expands two levels in the shipped scripts (acknowledge -> ack_invocation -> assert_term)', () => {
    const text = sqliteScriptText('pc_aps_acknowledge');
    assert.doesNotMatch(text, /@include/);
    assert.ok(text.includes(sqliteScriptText('pc_aps_ack_invocation')));
    assert.ok(text.includes(sqliteScriptText('pc_aps_assert_term')));
    assert.ok(loadSqliteScript('pc_aps_acknowledge').statements.length > 0);
  });
});
