// Migrations on both backends: up/down/status, the ledger, checksum refusal of a modified
// applied migration, procedure drift detection (MySQL/OceanBase: every state, also through the
// CLI's exit code), `migrate sql` printing exactly what `up` runs (and refusing where `up`
// refuses), the append-only lock files migrations/<backend>/CHECKSUMS, the strict directive
// parser and the procedure pins.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { listMigrations, parseDirectives, procedurePin, verifyPins } from '../src/migrations/catalog.ts';
import { openMigrationDriver } from '../src/migrations/drivers.ts';
import { MigrationDriftError, Migrator } from '../src/migrations/migrator.ts';
import { MIGRATIONS_DIR, PACKAGE_ROOT, PROCEDURES_DIR } from '../src/paths.ts';
import { BACKENDS, createBackend, type BackendFixture } from './helpers/backends.ts';

async function withMigrator<T>(fx: BackendFixture, fn: (m: Migrator) => Promise<T>, root?: string, proceduresRoot?: string): Promise<T> {
  const driver = await openMigrationDriver(fx.target);
  try {
    return await fn(new Migrator(driver, root, proceduresRoot));
  } finally {
    await driver.close();
  }
}

const sha256 = (data: string | Buffer) => crypto.createHash('sha256').update(data).digest('hex');

function run(file: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...(file.endsWith('.ts') ? ['--import', 'tsx'] : []), file, ...args],
      {
        cwd: PACKAGE_ROOT,
        env: { ...process.env, ...env },
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const LOCK_SCRIPT = path.join(PACKAGE_ROOT, 'scripts', 'lock-migrations.mjs');

/** A scratch copy of migrations/ and procedures/oceanbase/ to change freely. */
function scratchCopy(): { root: string; migrations: string; procedures: string; done(): void } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'apsup-mig-'));
  const migrations = path.join(root, 'migrations');
  const procedures = path.join(root, 'procedures');
  fs.cpSync(MIGRATIONS_DIR, migrations, { recursive: true });
  fs.cpSync(PROCEDURES_DIR, procedures, { recursive: true });
  return { root, migrations, procedures, done: () => fs.rmSync(root, { recursive: true, force: true }) };
}

describe('append-only guard: lock files, directives, pins (no database)', () => {
  for (const backend of ['sqlite', 'oceanbase'] as const) {
    test(`migrations/${backend}/CHECKSUMS lists every migration file with its current sha256, and nothing else`, () => {
      const dir = path.join(MIGRATIONS_DIR, backend);
      const text = fs.readFileSync(path.join(dir, 'CHECKSUMS'), 'utf8');
      assert.match(text, /^# Append-only lock/, 'the lock file starts with its header comment');
      const entries = text
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith('#'))
        .map((l) => {
          const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(l);
          assert.ok(m, `malformed CHECKSUMS line ${JSON.stringify(l)}`);
          return { sum: m[1], file: m[2] };
        });
      const files = fs
        .readdirSync(dir)
        .filter((f) => /\.(up|down)\.sql$/.test(f))
        .sort();
      assert.deepEqual(entries.map((e) => e.file).sort(), files, 'every .up.sql/.down.sql is listed once (run node scripts/lock-migrations.mjs for a new one)');
      for (const e of entries) {
        assert.equal(sha256(fs.readFileSync(path.join(dir, e.file))), e.sum, `${backend}/${e.file} changed after it was locked: migrations are append-only`);
      }
    });
  }

  test('the lock script: --check passes on the repository; it appends a new file, refuses a changed, deleted or out-of-order one and leaves the lock as it was', async () => {
    assert.equal((await run(LOCK_SCRIPT, ['--check'])).code, 0, 'the repository lock is complete');
    const scratch = scratchCopy();
    try {
      const dir = path.join(scratch.migrations, 'oceanbase');
      const lock = path.join(dir, 'CHECKSUMS');
      const before = fs.readFileSync(lock, 'utf8');
      fs.writeFileSync(path.join(dir, '9999_scratch.up.sql'), '-- scratch\nSELECT 1;\n');
      assert.equal((await run(LOCK_SCRIPT, ['--check', '--root', scratch.migrations])).code, 1, '--check reports a missing line');
      assert.equal(fs.readFileSync(lock, 'utf8'), before, '--check changes nothing');
      const appended = await run(LOCK_SCRIPT, ['--root', scratch.migrations]);
      assert.equal(appended.code, 0, appended.stderr);
      const after = fs.readFileSync(lock, 'utf8');
      assert.ok(after.startsWith(before), 'existing lines are kept as they were');
      assert.equal(after.slice(before.length), `${sha256('-- scratch\nSELECT 1;\n')}  9999_scratch.up.sql\n`);

      const first = fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.up.sql'))
        .sort()[0];
      fs.appendFileSync(path.join(dir, first), '\n-- edited in place\n');
      fs.writeFileSync(path.join(dir, '9999_other.down.sql'), 'SELECT 2;\n');
      const refused = await run(LOCK_SCRIPT, ['--root', scratch.migrations]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, new RegExp(`${first} changed after it was locked`));
      assert.equal(fs.readFileSync(lock, 'utf8'), after, 'a refusal appends nothing');

      fs.copyFileSync(path.join(MIGRATIONS_DIR, 'oceanbase', first), path.join(dir, first));
      fs.writeFileSync(path.join(dir, '0005_sneaked_in.up.sql'), 'SELECT 3;\n');
      const early = await run(LOCK_SCRIPT, ['--root', scratch.migrations]);
      assert.equal(early.code, 1);
      assert.match(early.stderr, /0005_sneaked_in\.up\.sql is new but sorts before/);
      fs.rmSync(path.join(dir, '0005_sneaked_in.up.sql'));
      fs.rmSync(path.join(dir, '9999_scratch.up.sql'));
      const deleted = await run(LOCK_SCRIPT, ['--root', scratch.migrations]);
      assert.equal(deleted.code, 1);
      assert.match(deleted.stderr, /9999_scratch\.up\.sql is locked but missing/);
    } finally {
      scratch.done();
    }
  });

  test('directive lines parse strictly: unknown words and trailing tokens are errors, never skipped', () => {
    const pin = 'a'.repeat(64);
    assert.deepEqual(
      parseDirectives(
        `-- @procedure pc_aps_x sha256=${pin}\n--   @procedure pc_aps_y\n-- @drop-procedure pc_aps_z\n-- @require database_charset=utf8mb4\n-- a comment @procedure\n`,
        'm',
      ),
      [
        { kind: 'procedure', name: 'pc_aps_x', value: pin, line: 1 },
        { kind: 'procedure', name: 'pc_aps_y', value: null, line: 2 },
        { kind: 'drop-procedure', name: 'pc_aps_z', value: null, line: 3 },
        { kind: 'require', name: 'database_charset', value: 'utf8mb4', line: 4 },
      ],
    );
    for (const bad of [
      '-- @procedure pc_aps_x sha256=abc',
      `-- @procedure pc_aps_x sha256=${pin} extra`,
      '-- @procedure pc_aps_x pc_aps_y',
      `-- @procedure pc_aps_x sha1=${pin}`,
      '-- @procedures pc_aps_x',
      '-- @procedure',
      '-- @drop-procedure pc_aps_x now',
      '-- @require database_charset',
    ]) {
      assert.throws(
        () => parseDirectives(`SELECT 1;\n${bad}\n`, 'm.up.sql'),
        (e: unknown) => e instanceof MigrationDriftError && /m\.up\.sql:2: malformed directive/.test(e.message),
        bad,
      );
    }
  });

  test('pins: the latest install must match the file; an older pin superseded by a later install is tolerated on replay', () => {
    const scratch = scratchCopy();
    try {
      const files = listMigrations('oceanbase', scratch.migrations);
      const op = 'pc_aps_read_lease';
      const latest = [...files].reverse().find((f) => parseDirectives(f.up).some((d) => d.kind === 'procedure' && d.name === op))!;
      assert.ok(
        parseDirectives(latest.up).some((d) => d.name === op && d.value === procedurePin(op)),
        `${latest.name} pins ${op}`,
      );
      const context = { files, proceduresRoot: scratch.procedures };
      verifyPins(latest, context);
      fs.appendFileSync(path.join(scratch.procedures, `${op}.sql`), '\n-- changed without a migration\n');
      assert.throws(
        () => verifyPins(latest, context),
        (e: unknown) => e instanceof MigrationDriftError && new RegExp(`${op}\\.sql .*does not match its pin in ${latest.name}\\.up\\.sql`).test(e.message),
      );
      // A new migration that reinstalls it with the new pin supersedes the old pin.
      const next = { name: '9999_reinstall', up: `-- @procedure ${op} sha256=${procedurePin(op, scratch.procedures)}\n`, down: null, checksum: '' };
      const chain = { files: [...files, next], proceduresRoot: scratch.procedures };
      verifyPins(latest, chain);
      verifyPins(next, chain);
    } finally {
      scratch.done();
    }
  });
});

const TABLES = ['pc_artifact_processing_leases', 'pc_artifact_processing_intents', 'pc_artifact_processing_binding_states'];

async function tableNames(fx: BackendFixture): Promise<string[]> {
  const rows =
    fx.backend === 'sqlite'
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
    if (d) {
      delimiter = d[1];
      continue;
    }
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
    before(async () => {
      fx = await createBackend(backend, { migrate: false });
    });
    after(async () => {
      await fx.cleanup();
    });

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
        assert.deepEqual(
          onDemand,
          ['pc_aps_adopt_profile_apscheduler', 'pc_aps_adopt_topic_memory_pr1490'],
          'adoption conversions are installed on demand, not drift',
        );
        assert.ok(
          status.procedures.every((p) => p.state === 'ok' || onDemand.includes(p.name)),
          JSON.stringify(status.procedures),
        );
      }
    });

    test('down reverts the last migration (or refuses an irreversible one, changing nothing), up re-applies it', async () => {
      const files = await withMigrator(fx, async (m) => m.files);
      const last = files[files.length - 1];
      if (last.down === null) {
        await assert.rejects(
          withMigrator(fx, (m) => m.down()),
          /has no down file and cannot be reverted/,
        );
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
        const first = fs
          .readdirSync(dir)
          .filter((f) => f.endsWith('.up.sql'))
          .sort()[0];
        fs.appendFileSync(path.join(dir, first), '\n-- edited after it was applied\n');
        await assert.rejects(
          withMigrator(fx, (m) => m.up(), root),
          (e: unknown) => e instanceof MigrationDriftError && /modified after it was applied/.test(e.message),
        );
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

describe('status is read-only on both backends', () => {
  for (const backend of BACKENDS) {
    test(`[${backend}] status of an empty database reports every migration pending and creates no table`, async () => {
      const fx = await createBackend(backend, { migrate: false });
      try {
        const status = await withMigrator(fx, (m) => m.status());
        assert.ok(status.migrations.length > 0 && status.migrations.every((m) => m.state === 'pending'));
        assert.deepEqual(await tableNames(fx), [], 'status created no ledger table');
        await withMigrator(fx, (m) => m.pendingSql());
        assert.deepEqual(await tableNames(fx), [], 'migrate sql created no ledger table');
      } finally {
        await fx.cleanup();
      }
    });
  }
});

describe('[mysql] procedure drift states, pins on up, and the CLI', () => {
  test('a procedure file changed after its migration is file_changed (drift); a new migration reinstalling it makes it pending; up makes it ok', async () => {
    const fx = await createBackend('mysql', { migrate: false });
    const scratch = scratchCopy();
    try {
      const { migrations, procedures } = scratch;
      await withMigrator(fx, (m) => m.up(), migrations, procedures);
      const op = 'pc_aps_read_lease';
      fs.appendFileSync(path.join(procedures, `${op}.sql`), '\n-- a header edit is a change too\n');
      const changed = await withMigrator(fx, (m) => m.status(), migrations, procedures);
      assert.equal(changed.procedures.find((p) => p.name === op)?.state, 'file_changed');
      assert.equal(changed.drift, true);
      assert.deepEqual(
        changed.procedures.filter((p) => p.state !== 'ok' && p.state !== 'on_demand').map((p) => p.name),
        [op],
      );

      fs.writeFileSync(
        path.join(migrations, 'oceanbase', '9999_reinstall_read_lease.up.sql'),
        `-- reinstalls ${op}\n-- @procedure ${op} sha256=${procedurePin(op, procedures)}\n`,
      );
      const pending = await withMigrator(fx, (m) => m.status(), migrations, procedures);
      assert.equal(pending.procedures.find((p) => p.name === op)?.state, 'pending');
      assert.equal(pending.drift, false);
      assert.equal(pending.pending, 1);

      assert.deepEqual(await withMigrator(fx, (m) => m.up(), migrations, procedures), ['9999_reinstall_read_lease']);
      const ok = await withMigrator(fx, (m) => m.status(), migrations, procedures);
      assert.equal(ok.procedures.find((p) => p.name === op)?.state, 'ok');
      assert.equal(ok.drift, false);
      assert.equal(ok.pending, 0);
    } finally {
      scratch.done();
      await fx.cleanup();
    }
  });

  test('down really runs on MySQL: a chain ending at 0006 reverts 0006 (drops its tables) and up re-applies it', async () => {
    const fx = await createBackend('mysql', { migrate: false });
    const scratch = scratchCopy();
    try {
      const dir = path.join(scratch.migrations, 'oceanbase');
      for (const f of fs.readdirSync(dir)) if (/^(\d{4})_/.test(f) && f.slice(0, 4) > '0006') fs.rmSync(path.join(dir, f));
      const applied = await withMigrator(fx, (m) => m.up(), scratch.migrations, scratch.procedures);
      const last = applied[applied.length - 1];
      assert.match(last, /^0006_/);
      const refTables = async () =>
        (
          await fx.query(
            "SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN ('ref_files', 'ref_datasets')",
          )
        )
          .map((r) => String(r.name))
          .sort();
      const before = await refTables();
      assert.deepEqual(before, ['ref_datasets', 'ref_files'], '0006 created its tables');
      assert.deepEqual(await withMigrator(fx, (m) => m.down(), scratch.migrations, scratch.procedures), [last]);
      const status = await withMigrator(fx, (m) => m.status(), scratch.migrations, scratch.procedures);
      assert.equal(status.pending, 1);
      assert.deepEqual(await refTables(), [], 'the down file dropped the tables of 0006');
      assert.deepEqual(await withMigrator(fx, (m) => m.up(), scratch.migrations, scratch.procedures), [last]);
      assert.deepEqual(await refTables(), before);
    } finally {
      scratch.done();
      await fx.cleanup();
    }
  });

  test('up and migrate sql refuse a procedure file that no longer matches its latest pin, before anything runs', async () => {
    const fx = await createBackend('mysql', { migrate: false });
    const scratch = scratchCopy();
    try {
      const { migrations, procedures } = scratch;
      fs.appendFileSync(path.join(procedures, 'pc_aps_assert_term.sql'), '\n-- changed without a migration\n');
      const stale = (e: unknown) => e instanceof MigrationDriftError && /pc_aps_assert_term\.sql .*does not match its pin/.test(e.message);
      await assert.rejects(
        withMigrator(fx, (m) => m.up(), migrations, procedures),
        stale,
      );
      await assert.rejects(
        withMigrator(fx, (m) => m.pendingSql(), migrations, procedures),
        stale,
      );
      assert.deepEqual(await tableNames(fx), [], 'nothing was applied');
    } finally {
      scratch.done();
      await fx.cleanup();
    }
  });

  test('apsup migrate status exits 0 when clean and 3 with a DRIFT line when drifted; migrate sql refuses a modified applied migration (exit 3) like up', async () => {
    const fx = await createBackend('mysql');
    try {
      const env = { POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: fx.url };
      const clean = await run('src/cli/main.ts', ['migrate', 'status'], env);
      assert.equal(clean.code, 0, clean.stdout + clean.stderr);
      assert.match(clean.stdout, /schema: up to date/);

      await fx.query('DROP PROCEDURE pc_aps_read_lease');
      await fx.query(`CREATE PROCEDURE pc_aps_read_lease(IN p_supervisor_key VARCHAR(191))
BEGIN
  SELECT p_supervisor_key AS supervisor_key, NULL AS holder_id, 0 AS supervisor_generation, NULL AS expires_at, 0 AS live, UTC_TIMESTAMP(3) AS db_now;
END`);
      const drifted = await run('src/cli/main.ts', ['migrate', 'status'], env);
      assert.equal(drifted.code, 3, drifted.stdout + drifted.stderr);
      assert.match(drifted.stdout, /definition_changed\s+pc_aps_read_lease/);
      assert.match(drifted.stdout, /^DRIFT: /m);

      await fx.query("UPDATE pc_aps_schema_migrations SET checksum = REPEAT('0', 64) WHERE name = '0001_supervisor_schema'");
      // Through the installed entry point (bin/apsup.mjs) too: the refusal exits 3 there as well.
      const sql = await run('bin/apsup.mjs', ['migrate', 'sql'], env);
      assert.equal(sql.code, 3, sql.stdout + sql.stderr);
      assert.match(sql.stderr, /0001_supervisor_schema was modified after it was applied/);
      assert.equal(sql.stdout, '', 'no plan is printed');
    } finally {
      await fx.cleanup();
    }
  });
});
