// Issue 40 items 1 and 5 on MariaDB: the server refuses every attack of a processor's commit and
// of its read handle, whatever the statement's text, with the text checks out of the way (the raw
// driver connection of the session). Two setups: one administrator URL (the runtime derives its
// restricted accounts) and the documented accounts of ops/mysql-grants.sql. Each attack is first
// shown to execute as the administrator (rolled back), so a refusal is the privilege's doing.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import mysql from 'mysql2/promise';
import { parseDatabaseUrl, type DatabaseTarget } from '../../src/config/database-url.ts';
import { openMigrationDriver } from '../../src/migrations/drivers.ts';
import { Migrator } from '../../src/migrations/migrator.ts';
import { MysqlStore } from '../../src/store/mysql/mysql-store.ts';
import { OWN_TABLES } from '../../src/store/own-tables.ts';
import { PROCESSOR_URL_VARIABLE, READER_URL_VARIABLE, fencingSummary, resolveSessionAccounts, type SessionAccounts } from '../../src/store/session-accounts.ts';
import type { Term } from '../../src/store/types.ts';
import { invocationToken, secretCandidate } from '../../src/store/invocation-token.ts';
import { createBackend, MYSQL_TEST_URL, type BackendFixture } from '../helpers/backends.ts';
import { takeTerm } from '../helpers/store-asserts.ts';
import { grantScript, ROLES, userFor, type Role } from '../helpers/grants-script.ts';
import { commitAttacks, PRIVILEGE_ERRNOS, readAttacks, runAttack, type Attack } from './mysql-attacks.ts';

const BUSINESS_DDL = 'CREATE TABLE adv_notes (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(200) NOT NULL) ENGINE = InnoDB';

type Mysql = DatabaseTarget & { backend: 'mysql' };
const connect = (t: Mysql) =>
  mysql.createConnection({ host: t.host, port: t.port, user: t.user, password: t.password, database: t.database, multipleStatements: false });
const urlOf = (t: Mysql) => `mysql://${encodeURIComponent(t.user)}:${encodeURIComponent(t.password)}@${t.host}:${t.port}/${t.database}`;

/** Every supervisor table's checksum (as the administrator). */
async function ownTablesState(admin: mysql.Connection): Promise<Record<string, string>> {
  const [rows] = await admin.query("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'");
  const own = (rows as Array<{ t: string }>).map((r) => r.t).filter((t) => (OWN_TABLES as readonly string[]).includes(t));
  const out: Record<string, string> = {};
  for (const t of own) {
    const [c] = await admin.query(`CHECKSUM TABLE \`${t}\` EXTENDED`);
    out[t] = String((c as Array<{ Checksum: unknown }>)[0].Checksum);
  }
  return out;
}

/** Shows the attack executes as the administrator, inside a transaction that is rolled back. */
async function provenAsAdmin(admin: mysql.Connection, attack: Attack): Promise<void> {
  if (!attack.provenAsAdmin) return;
  await admin.query('START TRANSACTION');
  try {
    const errno = await runAttack(admin, attack);
    // 1644: a procedure ran and raised its own error (SIGNAL): the call itself was allowed.
    assert.ok(errno === null || errno === 1644, `"${attack.name}" must execute as the administrator (else it proves nothing), got ${errno}`);
  } finally {
    await admin.query('ROLLBACK');
    await admin.query('UNLOCK TABLES').catch(() => undefined);
    await admin.query('HANDLER pc_artifact_processing_leases CLOSE').catch(() => undefined);
  }
}

function attackSuite(name: string, setup: () => Promise<{ admin: Mysql; accounts: SessionAccounts; cleanup: () => Promise<void> }>) {
  describe(`[mysql] ${name}: the server refuses every attack`, () => {
    let admin: mysql.Connection;
    let adminTarget: Mysql;
    let accounts: SessionAccounts;
    let cleanup: () => Promise<void>;
    let term: Term;
    let adminStore: MysqlStore;
    const fileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-adv-'));
    fs.chmodSync(fileDir, 0o777);

    before(async () => {
      ({ admin: adminTarget, accounts, cleanup } = await setup());
      admin = await connect(adminTarget);
      adminStore = MysqlStore.open(adminTarget, 2);
      term = await takeTerm(adminStore, 'h-adv');
      await adminStore.acceptRequest('adv-binding', 'scope-a');
    });
    after(async () => {
      await adminStore?.close();
      await admin?.end();
      await cleanup?.();
      fs.rmSync(fileDir, { recursive: true, force: true });
    });

    test('the runtime reports the fencing as enforced by grants', () => {
      assert.equal(accounts.setup, 'grants', fencingSummary(accounts));
      assert.match(fencingSummary(accounts), /^fencing: enforced by grants/);
    });

    test("a processor's fenced commit: each attack is refused by a privilege error; no pc_* row, no file; business writes commit", async () => {
      const attacks = commitAttacks(adminTarget.database, fileDir);
      for (const a of attacks) await provenAsAdmin(admin, a);
      const before = await ownTablesState(admin);
      const processor = MysqlStore.open(accounts.processor as Mysql, 2);
      const refused: Record<string, number | null> = {};
      try {
        await processor.fencedTransaction(term, async (tx) => {
          const raw = tx as mysql.PoolConnection; // no statement check at all: the server alone decides
          for (const a of attacks) refused[a.name] = await runAttack(raw, a);
          await raw.query("INSERT INTO adv_notes (note) VALUES ('legit')");
        });
      } finally {
        await processor.close();
      }
      for (const a of attacks) {
        assert.ok(PRIVILEGE_ERRNOS.has(refused[a.name] ?? 0), `"${a.name}": expected a privilege error, got ${refused[a.name]}`);
      }
      assert.deepEqual(await ownTablesState(admin), before, 'no supervisor table changed');
      assert.deepEqual(fs.readdirSync(fileDir), [], 'no server file written');
      const [notes] = await admin.query('SELECT note FROM adv_notes');
      assert.deepEqual(notes, [{ note: 'legit' }], 'the fenced business write committed');
      // The leader's renewal is not held up by anything the commit tried.
      const renewed = await adminStore.renewTerm(term, 30_000);
      assert.equal(renewed.outcome, 'renewed');
    });

    test("another scope's acknowledgement needs its token: a processor that knows its term cannot forge it", async () => {
      const secret = await adminStore.initInvocationSecret(secretCandidate());
      await adminStore.acceptRequest('adv-binding', 'scope-b');
      const processor = MysqlStore.open(accounts.processor as Mysql, 2);
      const ack = (scopeId: string) => ({ bindingName: 'adv-binding', scopeId, claimedRequestGeneration: 1, cleanThroughDirtyGeneration: null });
      try {
        // Its own invocation's token (scope-a), presented for scope-b: refused by the procedure.
        const own = invocationToken(secret, term, 'adv-binding', 'scope-a', 1);
        await assert.rejects(
          processor.fencedTransaction(term, (tx) => processor.ackInvocationWithToken(term, ack('scope-b'), own, tx)),
          (e: { code?: string }) => e.code === 'invocation_token_mismatch',
        );
        await assert.rejects(
          processor.fencedTransaction(term, (tx) => processor.ackInvocationWithToken(term, ack('scope-b'), 'f'.repeat(64), tx)),
          (e: { code?: string }) => e.code === 'invocation_token_mismatch',
        );
        assert.equal((await adminStore.readIntent('adv-binding', 'scope-b'))!.handledGeneration, 0, 'scope-b is still owed');
        // The host's token of scope-a's invocation: accepted.
        const r = await processor.fencedTransaction(term, (tx) => processor.ackInvocationWithToken(term, ack('scope-a'), own, tx));
        assert.equal(r.outcome, 'acknowledged');
      } finally {
        await processor.close();
      }
    });

    test("a processor's read handle session: each attack is refused; nothing written", async () => {
      const attacks = readAttacks(fileDir);
      for (const a of attacks) await provenAsAdmin(admin, a);
      await admin.query('DELETE FROM adv_notes');
      const before = await ownTablesState(admin);
      const reader = await connect(accounts.reader as Mysql);
      const refused: Record<string, number | null> = {};
      try {
        for (const a of attacks) {
          await reader.query('SET SESSION TRANSACTION READ ONLY'); // the read handle's own setup
          refused[a.name] = await runAttack(reader, a);
        }
      } finally {
        await reader.end();
      }
      for (const a of attacks) {
        assert.ok(PRIVILEGE_ERRNOS.has(refused[a.name] ?? 0), `"${a.name}": expected a privilege error, got ${refused[a.name]}`);
      }
      assert.deepEqual(await ownTablesState(admin), before);
      assert.deepEqual((await admin.query('SELECT COUNT(*) AS n FROM adv_notes'))[0], [{ n: 0 }], 'no business row written through the read handle');
      assert.deepEqual(fs.readdirSync(fileDir), []);
    });
  });
}

attackSuite('one administrator URL (derived accounts)', async () => {
  const fx: BackendFixture = await createBackend('mysql');
  await fx.query(BUSINESS_DDL);
  const target = fx.target as Mysql;
  const accounts = await resolveSessionAccounts(target, {});
  assert.equal(accounts.source, 'derived');
  return { admin: target, accounts, cleanup: () => fx.cleanup() };
});

attackSuite('the documented accounts (ops/mysql-grants.sql)', async () => {
  const base = parseDatabaseUrl(MYSQL_TEST_URL, 'APSUP_TEST_MYSQL_URL') as Mysql;
  const suffix = crypto.randomBytes(3).toString('hex');
  const db = `apsup_adv_${suffix}`;
  const password = `pw-${suffix}`;
  const { setup, afterMigrations } = grantScript(db, suffix, password);
  const root = await connect(base);
  for (const sql of setup) await root.query(sql);
  const as = (role: Role): Mysql => ({ ...base, database: db, user: userFor(role, suffix), password });
  const driver = await openMigrationDriver(as('owner'));
  try {
    await new Migrator(driver).up();
  } finally {
    await driver.close();
  }
  for (const sql of afterMigrations) await root.query(sql);
  // The DBA's per-table business grants (the file's example lines, for this table).
  await root.query(`CREATE TABLE \`${db}\`.adv_notes (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(200) NOT NULL) ENGINE = InnoDB`);
  await root.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON \`${db}\`.adv_notes TO '${as('processor').user}'@'%'`);
  await root.query(`GRANT SELECT ON \`${db}\`.adv_notes TO '${as('reader').user}'@'%'`);
  const accounts = await resolveSessionAccounts(as('runtime'), {
    [PROCESSOR_URL_VARIABLE]: urlOf(as('processor')),
    [READER_URL_VARIABLE]: urlOf(as('reader')),
  });
  assert.equal(accounts.source, 'configured');
  return {
    admin: { ...base, database: db },
    accounts,
    cleanup: async () => {
      await root.query(`DROP DATABASE IF EXISTS \`${db}\``);
      for (const role of ROLES) await root.query(`DROP USER IF EXISTS '${as(role).user}'@'%'`);
      await root.end();
    },
  };
});
