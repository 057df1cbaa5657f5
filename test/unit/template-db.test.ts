// The MySQL test databases are clones shared by the test processes of the server
// (test/helpers/template-db.ts): a clone is never handed to a second test while one has it, and a
// clone handed on keeps nothing of its last test.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import mysql from 'mysql2/promise';
import { MYSQL_TEST_URL, waitFor } from '../helpers/backends.ts';
import { claimClone, createMigratedDatabase, mysqlTemplate, resetClone, sweepStaleTemplates, templateHash } from '../helpers/template-db.ts';

const opts = { mysqlAdminUrl: MYSQL_TEST_URL, prefix: 'apsup_t' };
const admin = await mysql.createConnection({ uri: MYSQL_TEST_URL, multipleStatements: true });
after(() => admin.end());

function nameOf(db: { target: { backend: string } }): string {
  return (db.target as unknown as { database: string }).database;
}

async function tables(db: string): Promise<string[]> {
  const [rows] = (await admin.query('SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY 1', [db])) as unknown as [
    { t: string }[],
  ];
  return rows.map((r) => r.t);
}

async function ledger(db: string): Promise<number> {
  const [[row]] = (await admin.query(`SELECT COUNT(*) AS n FROM \`${db}\`.pc_aps_schema_migrations`)) as unknown as [[{ n: number }]];
  return Number(row.n);
}

test('a clone in use is never claimed by another test', async () => {
  const template = await mysqlTemplate(MYSQL_TEST_URL);
  const held = await createMigratedDatabase('mysql', opts);
  try {
    for (let i = 0; i < 5; i += 1) {
      const other = await claimClone(admin, template, templateHash());
      assert.notEqual(other, nameOf(held));
      if (other) await admin.query('SELECT RELEASE_LOCK(?)', [other]);
    }
  } finally {
    await held.drop();
  }
});

test('a clone handed on keeps nothing of its last test; a changed or still connected one is not handed on', async () => {
  const template = await mysqlTemplate(MYSQL_TEST_URL);
  const used = await createMigratedDatabase('mysql', opts);
  const db = nameOf(used);
  try {
    const fresh = await tables(db);
    const rows = await ledger(db);
    assert.ok(rows > 0, 'the template has ledger rows');
    // What a test leaves behind: a table of its own with a trigger, a procedure, changed rows.
    await admin.query(
      `CREATE TABLE \`${db}\`.fx_left (id INT PRIMARY KEY);
       CREATE TRIGGER \`${db}\`.fx_left_trg BEFORE INSERT ON \`${db}\`.fx_left FOR EACH ROW SET NEW.id = NEW.id;
       CREATE PROCEDURE \`${db}\`.fx_left_proc() SELECT 1;
       DELETE FROM \`${db}\`.pc_aps_schema_migrations;`,
    );
    // The next claimer's reset (the test still holds the lock, so nobody else can take it meanwhile).
    assert.equal(await resetClone(admin, template, db), true);
    assert.deepEqual(await tables(db), fresh, 'the table the test added is gone');
    assert.equal(await ledger(db), rows, "the template's rows are back");
    const [routines] = (await admin.query('SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? AND ROUTINE_NAME = ?', [
      db,
      'fx_left_proc',
    ])) as unknown as [unknown[]];
    assert.equal(routines.length, 0, 'the procedure the test added is gone');

    // Another session still on it (a test's child process): left alone.
    const child = await mysql.createConnection({ uri: MYSQL_TEST_URL.replace(/\/[^/]*$/, `/${db}`) });
    try {
      assert.equal(await resetClone(admin, template, db), null);
    } finally {
      await child.end();
    }
    // The server drops a closed session from its process list a moment after the client is done.
    await waitFor(async () => {
      const [[row]] = (await admin.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()', [
        db,
      ])) as unknown as [[{ n: number }]];
      return Number(row.n) === 0;
    }, 5_000);
    // One of the template's own procedures changed: not handed on (the claimer drops it).
    const [[proc]] = (await admin.query(
      "SELECT ROUTINE_NAME AS name FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? AND ROUTINE_TYPE = 'PROCEDURE' LIMIT 1",
      [db],
    )) as unknown as [[{ name: string }]];
    await admin.query(`DROP PROCEDURE \`${db}\`.\`${proc.name}\``);
    assert.equal(await resetClone(admin, template, db), false);
  } finally {
    await used.drop();
    await admin.query(`DROP DATABASE IF EXISTS \`${db}\``);
  }
});

test("another checkout's template is dropped once stale, unlocked and without clones; a young one, a locked one, a cloned one and ours are kept", async () => {
  const ours = templateHash();
  const otherHash = '0123456789abcdef';
  const other = `apsup_tpl_${otherHash}`;
  const clone = `apsup_tp_${otherHash}_0badc0de`;
  const cleanup = async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${other}`);
    await admin.query(`DROP DATABASE IF EXISTS ${clone}`);
  };
  await cleanup();
  await admin.query(`CREATE DATABASE ${other}`);
  await admin.query(`CREATE TABLE ${other}.t (id INT PRIMARY KEY)`);
  try {
    // `only`: another checkout's real template on this server is never this test's to drop.
    // Young (built now): kept under the default age bound.
    assert.deepEqual(await sweepStaleTemplates(admin, ours, { only: other }), []);
    // Stale but locked (being built): kept.
    const holder = await mysql.createConnection({ uri: MYSQL_TEST_URL });
    try {
      const [[got]] = (await holder.query('SELECT GET_LOCK(?, 0) AS ok', [other])) as unknown as [[{ ok: number }]];
      assert.equal(Number(got.ok), 1);
      assert.deepEqual(await sweepStaleTemplates(admin, ours, { staleMs: 0, only: other }), []);
      await holder.query('SELECT RELEASE_LOCK(?)', [other]);
    } finally {
      await holder.end();
    }
    // Stale and free, but a clone of it is left (a test still reads from it): kept.
    await admin.query(`CREATE DATABASE ${clone}`);
    assert.deepEqual(await sweepStaleTemplates(admin, ours, { staleMs: 0, only: other }), []);
    await admin.query(`DROP DATABASE ${clone}`);
    // The same template when it is "ours": never a candidate, whatever its age.
    assert.deepEqual(await sweepStaleTemplates(admin, otherHash, { staleMs: 0, only: other }), []);
    // Stale, free, no clone: dropped.
    assert.deepEqual(await sweepStaleTemplates(admin, ours, { staleMs: 0, only: other }), [other]);
    assert.deepEqual(await tables(other), []);
  } finally {
    await cleanup();
  }
});
