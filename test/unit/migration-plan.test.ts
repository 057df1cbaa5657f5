// The statements of one migration (src/migrations/plan.ts), built from files in a temporary folder:
// the order a DBA reviews (requirements, tables, conditional drops, procedures, ledger row), the
// refusal of a stale pin, and the script `apsup migrate sql` prints.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { MigrationDriftError, sha256, type MigrationFile } from '../../src/migrations/catalog.ts';
import { planDown, planUp, procedureInstall, renderPlan } from '../../src/migrations/plan.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-plan-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const body = '-- Purpose: a demo.\nCREATE PROCEDURE pc_demo_op()\nBEGIN\n  SELECT 1;\nEND';
fs.writeFileSync(path.join(root, 'pc_demo_op.sql'), `${body}\n`);
const pin = sha256(`${body}\n`);

function migration(up: string, down: string | null = null): MigrationFile {
  return { name: '0042_demo', up, down, checksum: sha256(up) };
}

test('MySQL up: requirement check, tables, guarded drop, procedure install, then the ledger row', () => {
  const m = migration(
    [
      '-- @require database_charset=utf8mb4',
      '-- @drop-table-if-empty pc_old',
      `-- @procedure pc_demo_op sha256=${pin}`,
      'CREATE TABLE pc_demo (id INT PRIMARY KEY);',
    ].join('\n'),
  );
  const plan = planUp('oceanbase', m, { files: [m], proceduresRoot: root });
  assert.equal(plan[0]!.check?.expect, 'utf8mb4');
  assert.match(plan[1]!.sql, /^CREATE TABLE pc_demo/);
  assert.deepEqual(plan[2], { sql: 'DROP TABLE pc_old', onlyIfEmpty: 'pc_old' });
  assert.equal(plan[3]!.sql, 'DROP PROCEDURE IF EXISTS pc_demo_op');
  assert.equal(plan[4]!.procedure, 'pc_demo_op');
  assert.match(plan.at(-1)!.sql, /^INSERT INTO pc_aps_schema_migrations .*'0042_demo'/);
});

test('a pin that no longer matches the file is refused before any statement is planned', () => {
  const m = migration(`-- @procedure pc_demo_op sha256=${'0'.repeat(64)}\nSELECT 1;`);
  assert.throws(
    () => planUp('oceanbase', m, { files: [m], proceduresRoot: root }),
    (e: unknown) => e instanceof MigrationDriftError && /does not match its pin/.test(e.message),
  );
});

test('SQLite up runs the file whole; down needs a down file', () => {
  const m = migration('CREATE TABLE t (v INTEGER);');
  const plan = planUp('sqlite', m);
  assert.equal(plan.length, 2);
  assert.equal(plan[0]!.sql, 'CREATE TABLE t (v INTEGER);');
  assert.throws(() => planDown('sqlite', m), /has no down file/);
  assert.match(planDown('sqlite', migration('', 'DROP TABLE t;'))[1]!.sql, /^DELETE FROM pc_aps_schema_migrations WHERE name = '0042_demo'$/);
});

test('the printed script wraps procedures in DELIMITER lines and names each condition', () => {
  const text = renderPlan('oceanbase', 'demo', [
    { sql: 'SELECT @@character_set_database', check: { expect: 'utf8mb4', message: 'x' } },
    ...procedureInstall('pc_demo_op', '0042_demo', root).slice(0, 2),
    { sql: 'DROP TABLE pc_old', onlyIfEmpty: 'pc_old' },
  ]);
  assert.match(text, /^-- demo\n-- stop unless this returns utf8mb4:\nSELECT @@character_set_database;\n/);
  assert.match(text, /DELIMITER \/\/\n-- Purpose: a demo.\nCREATE PROCEDURE pc_demo_op\(\)[\s\S]*END\n\/\/\nDELIMITER ;/);
  assert.match(text, /-- only when pc_old exists and SELECT 1 FROM pc_old LIMIT 1 returns no row \(a table holding rows is kept\):\nDROP TABLE pc_old;$/);
  assert.throws(() => procedureInstall('pc_demo_op', "0042'; DROP", root), /refusing to inline/);
});
