/**
 * What the adoptions share (adoption.ts): their result and context, the preflight runner, the
 * conversion's plan and call, and the calibration by the family's pending-work provider.
 */
import fs from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR, SQLITE_SCRIPTS_DIR } from '../paths.ts';
import type { FamilyRegistration, SchedulePolicyDecl } from '../registry/registration.ts';
import { splitSqlStatements } from '../sql-split.ts';
import { BaseStore } from '../store/base-store.ts';
import type { OperationName } from '../store/operations.ts';
import type { Store } from '../store/types.ts';
import type { MigrationBackend, PlannedStatement } from './catalog.ts';
import { procedureInstall } from './plan.ts';
import { TOPIC_MEMORY_PR1490 } from './adoption-detect.ts';
import type { MigrationDriver } from './drivers.ts';
import type { Migrator } from './migrator.ts';

export const PROFILE_APSCHEDULER = 'profile-apscheduler';
export const ADOPTION_SOURCES = [TOPIC_MEMORY_PR1490, PROFILE_APSCHEDULER] as const;
export type AdoptionSource = (typeof ADOPTION_SOURCES)[number];

export interface AdoptionProblem {
  problem: string;
  bindingName: string | null;
  scopeId: string | null;
  detail: string;
}

export interface AdoptionResult {
  source: AdoptionSource;
  outcome: 'adopted' | 'already_adopted' | 'refused' | 'planned';
  problems: AdoptionProblem[];
  /** What was done, in order (or, for a plan, what would be done). */
  steps: string[];
  /** The conversion's result row. */
  conversion: Record<string, unknown> | null;
  /** Scopes the family's pending-work provider re-marked dirty after the conversion. */
  calibrated: number;
  /** The reviewable script (dry run). */
  plan?: string;
}

export interface AdoptionContext {
  driver: MigrationDriver;
  migrator: Migrator;
  /** Opens a store on the same database (conversions run as catalogue operations). */
  openStore: () => Store;
  /** The family whose scheduler is adopted (binding name, schedule, pending-work provider). */
  registration: FamilyRegistration;
  /** The family's effective schedule (configuration applied). */
  schedule: SchedulePolicyDecl;
  dryRun?: boolean;
  keepLegacy?: boolean;
  /** profile-apscheduler: the APScheduler job id of Profile's cron job. */
  jobId?: string;
}

export function adoptionFile(backend: MigrationBackend, file: string): string {
  return fs.readFileSync(path.join(MIGRATIONS_DIR, backend, 'adopt', file), 'utf8');
}

/** Runs a preflight file: every statement returns problems; shape problems stop the rest. */
export async function runPreflight(driver: MigrationDriver, file: string, params: Record<string, unknown>): Promise<AdoptionProblem[]> {
  const problems: AdoptionProblem[] = [];
  const statements = splitSqlStatements(adoptionFile(driver.backend, file));
  for (const [index, sql] of statements.entries()) {
    const rows = await driver.read(sql, params);
    problems.push(
      ...rows.map((r) => ({
        problem: String(r.problem),
        bindingName: r.binding_name === null || r.binding_name === undefined ? null : String(r.binding_name),
        scopeId: r.scope_id === null || r.scope_id === undefined ? null : String(r.scope_id),
        detail: String(r.detail),
      })),
    );
    if (index === 0 && problems.length > 0) break;
  }
  return problems;
}

function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'number') return String(value);
  return `'${String(value).replace(/'/g, "''")}'`;
}

/** The conversion as it runs: MySQL installs and calls the procedure; SQLite runs the script. */
export function conversionPlan(backend: MigrationBackend, op: OperationName, params: Array<[string, unknown]>, installedBy: string): PlannedStatement[] {
  if (backend === 'sqlite') {
    const script = fs.readFileSync(path.join(SQLITE_SCRIPTS_DIR, `${op}.sql`), 'utf8').trim();
    const bound = params.map(([name, value]) => `--   :${name} = ${sqlLiteral(value)}`).join('\n');
    return [{ sql: `-- sql/sqlite/${op}.sql, run with:\n${bound}\n${script}` }];
  }
  return [...procedureInstall(op, installedBy), { sql: `CALL ${op}(${params.map(([, value]) => sqlLiteral(value)).join(', ')})` }];
}

export function statementsOf(backend: MigrationBackend, text: string): PlannedStatement[] {
  // SQLite runs a step file whole in one transaction; MySQL statement by statement.
  return backend === 'sqlite' ? [{ sql: text.trim() }] : splitSqlStatements(text).map((sql) => ({ sql }));
}

export async function callConversion(openStore: () => Store, op: OperationName, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const store = openStore();
  try {
    if (!(store instanceof BaseStore)) throw new Error('adoption conversions need a catalogue store');
    const sets = await store.callOperation(op, params as Record<string, string | number | null>);
    return (sets[sets.length - 1] ?? [])[0] ?? {};
  } finally {
    await store.close();
  }
}

/** Runs the family's pending-work provider until it finds nothing more (bounded pages). */
export async function calibrate(openStore: () => Store, registration: FamilyRegistration): Promise<number> {
  const remark = registration.pendingWork?.remarkDirty;
  if (!remark) return 0;
  const store = openStore();
  const limit = 1000;
  let total = 0;
  try {
    for (let page = 0; page < 10_000; page++) {
      const marked = await remark({
        bindingName: registration.bindingName,
        family: registration.family,
        signal: new AbortController().signal,
        limit,
        markDirty: async (scopeId) => {
          await store.markDirty(registration.bindingName, scopeId);
        },
        query: (sql, params) => store.domainQuery(sql, params),
      });
      total += marked;
      if (marked < limit) break;
    }
    return total;
  } finally {
    await store.close();
  }
}

export function result(source: AdoptionSource, outcome: AdoptionResult['outcome'], fields: Partial<AdoptionResult> = {}): AdoptionResult {
  return { source, outcome, problems: [], steps: [], conversion: null, calibrated: 0, ...fields };
}

export function formatAdoption(r: AdoptionResult): string {
  const lines = [`adoption ${r.source}: ${r.outcome}`];
  for (const step of r.steps) lines.push(`  - ${step}`);
  if (r.calibrated > 0) lines.push(`  - pending-work provider re-marked ${r.calibrated} scope(s) dirty`);
  if (r.problems.length > 0) {
    lines.push(`  ${r.problems.length} problem(s); nothing was changed:`);
    for (const p of r.problems.slice(0, 50)) {
      lines.push(`    ${p.problem}: ${[p.bindingName, p.scopeId].filter((v) => v !== null).join(' / ')}${p.detail ? ` (${p.detail})` : ''}`);
    }
    if (r.problems.length > 50) lines.push(`    ... ${r.problems.length - 50} more`);
  }
  return lines.join('\n');
}
