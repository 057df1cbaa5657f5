// Migrations on both backends: up/down/status, the ledger, checksum refusal of a modified
// applied migration, procedure drift detection (MySQL/OceanBase), and `migrate sql` printing
// exactly what `up` runs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openMigrationDriver } from '../src/migrations/drivers.ts';
import { MigrationDriftError, Migrator } from '../src/migrations/migrator.ts';
import { MIGRATIONS_DIR } from '../src/paths.ts';
import { BACKENDS, createBackend, type BackendFixture } from './helpers/backends.ts';

async function withMigrator<T>(fx: BackendFixture, fn: (m: Migrator) => Promise<T>, root?: string): Promise<T> {
  const driver = await openMigrationDriver(fx.target);
  try {
    return await fn(new Migrator(driver, root));
  } finally {
    await driver.close();
  }
}

const TABLES = ['pc_artifact_processing_leases', 'pc_artifact_processing_intents', 'pc_artifact_processing_binding_states'];

async function tableNames(fx: BackendFixture): Promise<string[]> {
  const rows = fx.backend === 'sqlite'
    ? await fx.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'pc\\_%' ESCAPE '\\'")
    : await fx.query("SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'pc\\_%'");
  return rows.map((r) => String(r.name)).sort();
}

/** Executes a script printed by `migrate sql`, honouring DELIMITER lines (mysql client syntax). */
async function runPrintedScript(fx: BackendFixture, script: string): Promise<void> {
  if (fx.backend === 'sqlite') {
    const { SqliteStore } = await import('../src/store/sqlite/sqlite-store.ts');
    (fx.store as InstanceType<typeof SqliteStore>).db.exec(script);
    return;
  }
  let delimiter = ';';
  let buffer: string[] = [];
  const statements: string[] = [];
  for (const line of script.split('\n')) {
    const d = /^DELIMITER\s+(\S+)\s*$/.exec(line);
    if (d) { delimiter = d[1]; continue; }
    if (/^\s*--/.test(line) && buffer.length === 0) continue;
    buffer.push(line);
    if (line.trimEnd().endsWith(delimiter)) {
      const text = buffer.join('\n').trimEnd();
      statements.push(text.slice(0, text.length - delimiter.length));
      buffer = [];
    }
  }
  assert.equal(buffer.join('').trim(), '', 'printed script ends with a complete statement');
  for (const sql of statements) if (sql.trim()) await fx.query(sql);
}

for (const backend of BACKENDS) {
  describe(`[${backend}] migrations`, () => {
    let fx: BackendFixture;
    before(async () => { fx = await createBackend(backend, { migrate: false }); });
    after(async () => { await fx.cleanup(); });

    test('up applies every migration once and records it in the ledger; status is clean', async () => {
      const applied = await withMigrator(fx, (m) => m.up());
      assert.ok(applied.length >= 1);
      assert.deepEqual(await withMigrator(fx, (m) => m.up()), [], 'second up applies nothing');
      for (const t of TABLES) assert.ok((await tableNames(fx)).includes(t), `${t} exists`);
      const status = await withMigrator(fx, (m) => m.status());
      assert.equal(status.drift, false);
      assert.equal(status.pending, 0);
      assert.ok(status.migrations.every((m) => m.state === 'applied'));
      if (backend === 'mysql') {
        assert.ok(status.procedures.length >= 14);
        const onDemand = status.procedures.filter((p) => p.state === 'on_demand').map((p) => p.name);
        assert.deepEqual(onDemand, ['pc_aps_adopt_profile_apscheduler', 'pc_aps_adopt_topic_memory_pr1490'], 'adoption conversions are installed on demand, not drift');
        assert.ok(status.procedures.every((p) => p.state === 'ok' || onDemand.includes(p.name)), JSON.stringify(status.procedures));
      }
    });

    test('down reverts the last migration (or refuses an irreversible one, changing nothing), up re-applies it', async () => {
      const files = await withMigrator(fx, async (m) => m.files);
      const last = files[files.length - 1];
      if (last.down === null) {
        await assert.rejects(withMigrator(fx, (m) => m.down()), /has no down file and cannot be reverted/);
        const status = await withMigrator(fx, (m) => m.status());
        assert.equal(status.pending, 0, 'an irreversible migration stays applied');
        return;
      }
      const reverted = await withMigrator(fx, (m) => m.down());
      assert.deepEqual(reverted, [last.name]);
      const status = await withMigrator(fx, (m) => m.status());
      assert.equal(status.pending, 1);
      assert.deepEqual(await withMigrator(fx, (m) => m.up()), [last.name]);
    });

    test('an applied migration whose file changed stops up with a drift error', async () => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-mig-'));
      try {
        fs.cpSync(MIGRATIONS_DIR, root, { recursive: true });
        const dir = path.join(root, backend === 'sqlite' ? 'sqlite' : 'oceanbase');
        const first = fs.readdirSync(dir).filter((f) => f.endsWith('.up.sql')).sort()[0];
        fs.appendFileSync(path.join(dir, first), '\n-- edited after it was applied\n');
        await assert.rejects(withMigrator(fx, (m) => m.up(), root), (e: unknown) => e instanceof MigrationDriftError && /modified after it was applied/.test(e.message));
        const status = await withMigrator(fx, (m) => m.status(), root);
        assert.equal(status.drift, true);
        assert.equal(status.migrations.find((m) => `${m.name}.up.sql` === first)?.state, 'modified');
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
      }
    });

    test('migrate sql prints exactly what up runs: running the printed script yields an up-to-date schema', async () => {
      const other = await createBackend(backend, { migrate: false });
      try {
        const script = await withMigrator(other, (m) => m.pendingSql());
        assert.match(script, /pc_artifact_processing_intents/);
        if (backend === 'mysql') assert.match(script, /DELIMITER \/\/\n(?:--.*\n)*CREATE PROCEDURE pc_aps_assert_term/);
        await runPrintedScript(other, script);
        const status = await withMigrator(other, (m) => m.status());
        assert.equal(status.pending, 0, JSON.stringify(status.migrations));
        assert.equal(status.drift, false, JSON.stringify(status.procedures));
        assert.equal((await withMigrator(other, (m) => m.pendingSql())).includes('CREATE TABLE pc_artifact_processing_intents'), false);
      } finally {
        await other.cleanup();
      }
    });

    if (backend === 'mysql') {
      test('a procedure changed outside migrations is reported as drift', async () => {
        await fx.query('DROP PROCEDURE pc_aps_read_lease');
        await fx.query(`CREATE PROCEDURE pc_aps_read_lease(IN p_supervisor_key VARCHAR(191))
BEGIN
  SELECT p_supervisor_key AS supervisor_key, 'someone' AS holder_id, 99 AS supervisor_generation,
         NULL AS expires_at, 1 AS live, UTC_TIMESTAMP(3) AS db_now;
END`);
        const status = await withMigrator(fx, (m) => m.status());
        assert.equal(status.drift, true);
        assert.equal(status.procedures.find((p) => p.name === 'pc_aps_read_lease')?.state, 'definition_changed');
        await fx.query('DROP PROCEDURE pc_aps_read_lease');
        const missing = await withMigrator(fx, (m) => m.status());
        assert.equal(missing.procedures.find((p) => p.name === 'pc_aps_read_lease')?.state, 'missing');
      });
    }
  });
}
