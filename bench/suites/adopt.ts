/**
 * adopt: how long the maintenance window of `apsup migrate adopt topic-memory-pr1490` lasts on a
 * Topic Memory PR #1490 database of N pending scopes (the legacy fixture of the tests, scaled:
 * a quarter uncovered, a quarter with unconfirmed flushes, a wave in progress). Measured per
 * repetition on a fresh database: the read-only preflight alone, then the whole adoption
 * (preflight, set-aside, every migration, the checked conversion, retire). Figures are printed
 * and written to bench/results/adopt-*.json; nothing is asserted.
 */
import { performance } from 'node:perf_hooks';
import { adoptTopicMemoryPr1490, runPreflight } from '../../src/migrations/adoption.ts';
import { createEphemeralDatabase } from '../../src/devtools/ephemeral-database.ts';
import { openMigrationDriver } from '../../src/migrations/drivers.ts';
import { Migrator } from '../../src/migrations/migrator.ts';
import { openStore } from '../../src/store/open.ts';
import type { Backend } from '../../src/store/types.ts';
import { legacyTopicMemory } from '../../test/fixtures/legacy/pr1490-families.ts';
import { createPr1490Database, pr1490Data } from '../../test/fixtures/legacy/pr1490.ts';
import type { BackendFixture } from '../../test/helpers/backends.ts';
import { formatNumber, median, printTable, progress, writeResult } from '../lib/report.ts';

export interface AdoptOptions {
  backends: Backend[];
  sizes: number[];
  repeat: number;
}

export interface AdoptRow {
  backend: Backend;
  scopes: number;
  intents: number;
  preflightMs: number;
  adoptMs: number;
  scopesPerSecond: number;
  preflightRuns: number[];
  adoptRuns: number[];
}

/** An empty database with the raw query access the legacy fixture builders use. */
async function emptyDatabase(backend: Backend) {
  const db = await createEphemeralDatabase(backend, { migrate: false, prefix: 'apsup_bench', mysqlAdminUrl: process.env.APSUP_TEST_MYSQL_URL });
  const store = openStore(db.target);
  const fx = {
    backend,
    target: db.target,
    url: db.url,
    store,
    async query(sql: string, params: unknown[] = []) {
      if (db.target.backend === 'sqlite') {
        const s = (store as unknown as { db: import('better-sqlite3').Database }).db.prepare(sql);
        return s.reader ? (s.all(...params) as Record<string, unknown>[]) : (s.run(...params), []);
      }
      const [rows] = await (store as unknown as { pool: import('mysql2/promise').Pool }).pool.query(sql, params);
      return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
    },
  } as unknown as BackendFixture;
  return {
    fx,
    async close() {
      await store.close();
      await db.drop();
    },
  };
}

async function once(backend: Backend, scopes: number): Promise<{ preflightMs: number; adoptMs: number; intents: number }> {
  const { fx, close } = await emptyDatabase(backend);
  try {
    await createPr1490Database(fx, pr1490Data({ waveInProgress: true, bulk: scopes }));
    const driver = await openMigrationDriver(fx.target);
    try {
      let t = performance.now();
      const problems = await runPreflight(driver, 'topic_memory_pr1490.preflight.sql', { binding_name: legacyTopicMemory.bindingName });
      const preflightMs = performance.now() - t;
      if (problems.length > 0) throw new Error(`preflight found problems: ${JSON.stringify(problems.slice(0, 3))}`);
      t = performance.now();
      const result = await adoptTopicMemoryPr1490({
        driver,
        migrator: new Migrator(driver),
        openStore: () => openStore(fx.target),
        registration: legacyTopicMemory,
        schedule: legacyTopicMemory.schedule,
      });
      const adoptMs = performance.now() - t;
      if (result.outcome !== 'adopted') throw new Error(`adoption ${result.outcome}: ${JSON.stringify(result.problems.slice(0, 3))}`);
      return { preflightMs, adoptMs, intents: Number(result.conversion?.intent_keys ?? 0) };
    } finally {
      await driver.close();
    }
  } finally {
    await close();
  }
}

export async function runAdoptSuite(options: AdoptOptions): Promise<AdoptRow[]> {
  const rows: AdoptRow[] = [];
  for (const backend of options.backends) {
    for (const scopes of options.sizes) {
      const preflightRuns: number[] = [];
      const adoptRuns: number[] = [];
      let intents = 0;
      for (let r = 0; r < options.repeat; r++) {
        progress(`adopt ${backend} ${scopes} scopes, run ${r + 1}/${options.repeat}`);
        const run = await once(backend, scopes);
        preflightRuns.push(run.preflightMs);
        adoptRuns.push(run.adoptMs);
        intents = run.intents;
      }
      const adoptMs = median(adoptRuns);
      rows.push({
        backend,
        scopes,
        intents,
        preflightMs: median(preflightRuns),
        adoptMs,
        scopesPerSecond: scopes / (adoptMs / 1000),
        preflightRuns,
        adoptRuns,
      });
    }
  }
  printTable(
    'adopt topic-memory-pr1490: maintenance window (median)',
    ['backend', 'legacy scopes', 'intents', 'preflight ms', 'adoption ms', 'legacy scopes/s'],
    rows.map((r) => [
      r.backend,
      formatNumber(r.scopes),
      formatNumber(r.intents),
      Math.round(r.preflightMs),
      Math.round(r.adoptMs),
      formatNumber(Math.round(r.scopesPerSecond)),
    ]),
  );
  console.log(`raw results: ${writeResult('adopt', { rows })}`);
  return rows;
}
