/** Parent-side helpers for runtime host children (bench/lib/runtime-child.ts) and bench tables. */
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BackendFixtureLike } from './fixture.ts';
import { call, forkReady, track, waitExit } from './children.ts';

const LIB = path.dirname(fileURLToPath(import.meta.url));
export const RUNTIME_CHILD = path.join(LIB, 'runtime-child.ts');
export const API_CHILD = path.join(LIB, 'api-child.ts');
export const FAMILIES_MODULE = path.join(LIB, '..', 'fixtures', 'families.ts');
export const CLI_MAIN = path.join(LIB, '..', '..', 'src', 'cli', 'main.ts');
/** The command users run (precompiled CLI, bin/cli-cache.mjs): hosts the bench measures start as in production. */
export const APSUP_BIN = path.join(LIB, '..', '..', 'bin', 'apsup.mjs');

export function benchLogFile(name: string): string {
  return path.join(os.tmpdir(), `apsup-bench-${name}-${process.pid}.log`);
}

/** Environment of a runtime host child: the database, the bench families and any tuning. */
export function runtimeEnv(databaseUrl: string, extra: Record<string, string | number | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Only what the suite sets reaches the child's runtime configuration.
  for (const key of Object.keys(process.env)) if (key.startsWith('POWERCONTEXT_SERVER_RUNTIME_') || key.startsWith('APSUP_BENCH_')) env[key] = undefined;
  env.POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL = databaseUrl;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = String(v);
  return env;
}

function cleanEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries({ ...process.env, ...env })) if (v !== undefined) out[k] = v;
  return out;
}

export async function forkRuntime(env: NodeJS.ProcessEnv, logName: string): Promise<ChildProcess> {
  // APSUP_BENCH_CPU_PROF=<dir>: the runtime host writes a V8 CPU profile there when it exits.
  const prof = process.env.APSUP_BENCH_CPU_PROF;
  const execArgv = prof ? ['--cpu-prof', '--cpu-prof-dir', prof] : [];
  const child = await forkReady(RUNTIME_CHILD, {}, { logFile: benchLogFile(logName), envOverride: cleanEnv(env), execArgv });
  return track(child);
}

export async function forkApi(databaseUrl: string, logName: string): Promise<ChildProcess> {
  const child = await forkReady(API_CHILD, {}, { logFile: benchLogFile(logName), envOverride: cleanEnv({ APSUP_BENCH_DATABASE_URL: databaseUrl }) });
  return track(child);
}

export async function stopRuntime(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await Promise.race([call(child, { type: 'stop' }).catch(() => undefined), new Promise((r) => setTimeout(r, 15_000))]);
  await waitExit(child, 5_000);
}

export async function stopApi(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await Promise.race([call(child, { type: 'exit' }).catch(() => undefined), new Promise((r) => setTimeout(r, 5_000))]);
  await waitExit(child, 2_000);
}

/**
 * Work left for the given bindings: keys with ordinary work (dirty > clean) and keys with an owed
 * request (requested > handled), both through the partial/flag indexes. Done when both are 0.
 */
export async function remainingWork(fx: BackendFixtureLike, bindings: string[]): Promise<{ dirty: number; owed: number }> {
  const marks = bindings.map(() => '?').join(', ');
  const sql =
    fx.backend === 'sqlite'
      ? `SELECT (SELECT COUNT(*) FROM pc_artifact_processing_intents WHERE binding_name IN (${marks}) AND dirty_generation > clean_generation) AS dirty,
              (SELECT COUNT(*) FROM pc_artifact_processing_intents WHERE binding_name IN (${marks}) AND requested_generation > handled_generation) AS owed`
      : `SELECT (SELECT COUNT(*) FROM pc_artifact_processing_intents WHERE binding_name IN (${marks}) AND has_ordinary_work = 1) AS dirty,
              (SELECT COUNT(*) FROM pc_artifact_processing_intents WHERE binding_name IN (${marks}) AND has_owed_request = 1) AS owed`;
  const rows = await fx.exec(sql, [...bindings, ...bindings]);
  return { dirty: Number(rows[0]?.dirty ?? 0), owed: Number(rows[0]?.owed ?? 0) };
}

/** The table the record processor writes its start times to. */
export async function createStartsTable(fx: BackendFixtureLike): Promise<void> {
  if (fx.backend === 'sqlite') {
    await fx.exec(
      'CREATE TABLE IF NOT EXISTS bench_starts (id INTEGER PRIMARY KEY, scope_id TEXT NOT NULL, started_ms REAL NOT NULL, holder_id TEXT NOT NULL, supervisor_generation INTEGER NOT NULL)',
    );
    await fx.exec('CREATE INDEX IF NOT EXISTS ix_bench_starts_scope ON bench_starts (scope_id)');
  } else {
    await fx.exec(
      'CREATE TABLE IF NOT EXISTS bench_starts (id BIGINT AUTO_INCREMENT PRIMARY KEY, scope_id VARCHAR(191) NOT NULL, started_ms DOUBLE NOT NULL, holder_id VARCHAR(128) NOT NULL, supervisor_generation BIGINT NOT NULL, KEY ix_bench_starts_scope (scope_id)) ENGINE = InnoDB',
    );
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}
