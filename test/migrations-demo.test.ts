// The demo tables (ref_*) are not part of `migrate up`: a production database holds only the
// supervisor's and the task system's tables. `up({ demo: true })` (apsup start, migrate up
// --with-demo, the test fixtures) creates them; migration 0020 (SQLite 0013) converts an existing
// database, dropping only the demo tables that hold no rows.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { demoTables } from '../src/migrations/catalog.ts';
import { openMigrationDriver } from '../src/migrations/drivers.ts';
import { Migrator } from '../src/migrations/migrator.ts';
import { MIGRATIONS_DIR, PACKAGE_ROOT } from '../src/paths.ts';
import { BACKENDS, createBackend, type BackendFixture } from './helpers/backends.ts';

const MINE = { sqlite: '0013_demo_tables_opt_in', mysql: '0020_production_schema' } as const;

async function withMigrator<T>(fx: BackendFixture, fn: (m: Migrator) => Promise<T>): Promise<T> {
  const driver = await openMigrationDriver(fx.target);
  try {
    return await fn(new Migrator(driver));
  } finally {
    await driver.close();
  }
}

async function tables(fx: BackendFixture): Promise<string[]> {
  const rows =
    fx.backend === 'sqlite'
      ? await fx.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      : await fx.query('SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() ORDER BY TABLE_NAME');
  return rows.map((r) => String(r.name));
}

function previousMigration(backend: 'sqlite' | 'mysql'): string {
  const dir = path.join(MIGRATIONS_DIR, backend === 'sqlite' ? 'sqlite' : 'oceanbase');
  const names = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.up.sql'))
    .map((f) => f.slice(0, -'.up.sql'.length))
    .sort();
  const before = names.filter((n) => n < MINE[backend]);
  assert.ok(names.includes(MINE[backend]) && before.length > 0);
  return before[before.length - 1];
}

const DEMO = demoTables('sqlite');

test('the demo schema files of both backends create the same ten tables', () => {
  assert.equal(DEMO.length, 10);
  assert.deepEqual(demoTables('oceanbase'), DEMO);
  assert.ok(DEMO.every((t) => t.startsWith('ref_')));
});

for (const backend of BACKENDS) {
  describe(`demo tables out of migrate up (${backend})`, () => {
    test('a fresh migrate up creates no ref_* table; up({ demo: true }) creates them all, idempotently', async () => {
      const fx = await createBackend(backend, { migrate: false });
      try {
        await withMigrator(fx, (m) => m.up());
        const production = await tables(fx);
        assert.deepEqual(
          production.filter((t) => t.startsWith('ref_')),
          [],
          'no demo table in a production schema',
        );
        assert.ok(production.includes('pc_artifact_processing_intents') && production.includes('pc_durable_tasks'));
        assert.ok(
          production.every((t) => t.startsWith('pc_') || t.startsWith('sqlite_')),
          `only supervisor and task tables: ${production.join(', ')}`,
        );
        assert.deepEqual((await withMigrator(fx, (m) => m.status())).demoTables, []);

        assert.deepEqual(await withMigrator(fx, (m) => m.up({ demo: true })), [], 'no migration pending; the demo schema is not one');
        await fx.query("INSERT INTO ref_files (file_id) VALUES ('f-1')");
        await withMigrator(fx, (m) => m.up({ demo: true }));
        assert.deepEqual((await tables(fx)).filter((t) => t.startsWith('ref_')).sort(), [...DEMO].sort());
        assert.equal((await fx.query('SELECT COUNT(*) AS n FROM ref_files'))[0].n, 1, 'a second install keeps the rows');
        const status = await withMigrator(fx, (m) => m.status());
        assert.deepEqual(status.demoTables, DEMO);
        assert.equal(status.drift, false);
      } finally {
        await fx.cleanup();
      }
    });

    test(`an existing database: ${MINE[backend]} drops the empty demo tables and keeps, untouched, those holding rows`, async () => {
      const fx = await createBackend(backend, { migrate: false });
      try {
        await withMigrator(fx, (m) => m.up({ to: previousMigration(backend) }));
        assert.deepEqual((await tables(fx)).filter((t) => t.startsWith('ref_')).sort(), [...DEMO].sort(), 'the old chain created them');
        await fx.query("INSERT INTO ref_topic_sources (scope_id, seq, words) VALUES ('t-1', 1, 10), ('t-1', 2, 20)");
        await fx.query("INSERT INTO ref_files (file_id, state) VALUES ('f-1', 'indexed')");
        const sql = await withMigrator(fx, (m) => m.pendingSql());
        assert.match(
          sql,
          /-- only when ref_topic_sources exists and SELECT 1 FROM ref_topic_sources LIMIT 1 returns no row[^\n]*\nDROP TABLE ref_topic_sources;/,
        );
        assert.deepEqual((await withMigrator(fx, (m) => m.up()))[0], MINE[backend]);
        assert.deepEqual((await tables(fx)).filter((t) => t.startsWith('ref_')).sort(), ['ref_files', 'ref_topic_sources']);
        assert.deepEqual(
          (await fx.query('SELECT scope_id, seq, words FROM ref_topic_sources ORDER BY seq')).map((r) => Number(r.words)),
          [10, 20],
        );
        assert.equal(String((await fx.query('SELECT state FROM ref_files'))[0].state), 'indexed');
        const status = await withMigrator(fx, (m) => m.status());
        assert.deepEqual(status.demoTables, ['ref_topic_sources', 'ref_files'], 'status names the kept tables for the DBA');
        // The demo install completes the set again (apsup start on a converted database).
        await withMigrator(fx, (m) => m.up({ demo: true }));
        assert.equal((await withMigrator(fx, (m) => m.status())).demoTables.length, 10);
        assert.equal((await fx.query('SELECT COUNT(*) AS n FROM ref_topic_sources'))[0].n, 2);
      } finally {
        await fx.cleanup();
      }
    });

    test(`${MINE[backend]} down re-creates the dropped tables; up drops them again`, async () => {
      const fx = await createBackend(backend, { migrate: false });
      try {
        await withMigrator(fx, (m) => m.up({ to: MINE[backend] }));
        assert.deepEqual(
          (await tables(fx)).filter((t) => t.startsWith('ref_')),
          [],
        );
        assert.deepEqual(await withMigrator(fx, (m) => m.down()), [MINE[backend]]);
        assert.equal((await tables(fx)).filter((t) => t.startsWith('ref_')).length, 10);
        assert.deepEqual(await withMigrator(fx, (m) => m.up({ to: MINE[backend] })), [MINE[backend]]);
        assert.deepEqual(
          (await tables(fx)).filter((t) => t.startsWith('ref_')),
          [],
        );
      } finally {
        await fx.cleanup();
      }
    });
  });
}

test('apsup migrate up leaves the demo tables out; --with-demo installs them (SQLite, through the CLI)', async () => {
  const fx = await createBackend('sqlite', { migrate: false });
  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [path.join(PACKAGE_ROOT, 'bin', 'apsup.mjs'), ...args],
        {
          cwd: PACKAGE_ROOT,
          env: { ...process.env, POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL: fx.url },
          timeout: 60_000,
        },
        (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  try {
    const up = await cli(['migrate', 'up']);
    assert.equal(up.code, 0, up.stderr);
    assert.deepEqual(
      (await tables(fx)).filter((t) => t.startsWith('ref_')),
      [],
    );
    const demo = await cli(['migrate', 'up', '--with-demo']);
    assert.equal(demo.code, 0, demo.stderr);
    assert.match(demo.stdout, /demo tables: installed/);
    assert.equal((await tables(fx)).filter((t) => t.startsWith('ref_')).length, 10);
    const status = await cli(['migrate', 'status']);
    assert.match(status.stdout, /demo tables \(apsup start/);
  } finally {
    await fx.cleanup();
  }
});
