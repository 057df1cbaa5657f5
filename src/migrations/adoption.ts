/**
 * `apsup migrate adopt <source>`: converts the state of a scheduler this runtime replaces, in a
 * maintenance window (RFC 11; A12, A13). Every step is SQL a DBA can read before it runs
 * (`--dry-run` and `apsup migrate sql` print the plan):
 *
 * topic-memory-pr1490 (migrations/<backend>/adopt/topic_memory_pr1490.*):
 *   0. preflight (read-only): baseline shape, no live PR #1490 lease, data consistency. Any
 *      problem stops here with a report; the database is left exactly as it was.
 *   1. set aside the PR #1490 binding states and lease (renamed, nothing dropped);
 *   2. the current migrations up to the adoption ledger;
 *   3. the conversion pc_aps_adopt_topic_memory_pr1490 (one transaction, consistency-checked
 *      against the legacy rows, rolled back on any failure);
 *   4. the remaining migrations;
 *   5. retire: drop the auto-wave target table and the set-aside tables (skipped with
 *      --keep-legacy; a later run retires).
 *   Interrupted runs resume from the phase the database shows (adoption-detect.ts).
 * profile-apscheduler (migrations/<backend>/adopt/profile_apscheduler.*):
 *   preflight (job store shape, not adopted yet, binding not yet checked by the supervisor), then
 *   the Profile job's next_run_time is judged against the configured cron, and
 *   pc_aps_adopt_profile_apscheduler records the checkpoint and removes the job in one transaction.
 * After a conversion the family's pending-work provider, if it has one, re-marks dirty every scope
 * whose domain facts show work (sources that arrived before the switch are never skipped).
 */
import fs from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR, SQLITE_SCRIPTS_DIR } from '../paths.ts';
import type { FamilyRegistration, SchedulePolicyDecl } from '../registry/registration.ts';
import { splitSqlStatements } from '../sql-split.ts';
import { BaseStore } from '../store/base-store.ts';
import { StoreError } from '../store/errors.ts';
import type { OperationName } from '../store/operations.ts';
import { toDbTime } from '../store/rows.ts';
import type { Store } from '../store/types.ts';
import { procedureInstall, procedureRemoval, renderPlan, type MigrationBackend, type PlannedStatement } from './catalog.ts';
import { TOPIC_MEMORY_PR1490, TOPIC_MEMORY_PR1490_LEDGER_NAME, topicMemoryPr1490Phase } from './adoption-detect.ts';
import type { MigrationDriver } from './drivers.ts';
import type { Migrator } from './migrator.ts';
import { cronFireAtOrBefore, cronFireBefore } from '../schedule/cron.ts';

export const PROFILE_APSCHEDULER = 'profile-apscheduler';
export const ADOPTION_SOURCES = [TOPIC_MEMORY_PR1490, PROFILE_APSCHEDULER] as const;
export type AdoptionSource = (typeof ADOPTION_SOURCES)[number];
export const DEFAULT_PROFILE_JOB_ID = 'profile-refresh';
const PROFILE_APSCHEDULER_LEDGER_NAME = 'profile_apscheduler';

/** The migration after which each conversion was written (it needs the adoption ledger). */
const CONVERSION_AFTER: Record<MigrationBackend, string> = { sqlite: '0006_adoptions', oceanbase: '0009_adoptions' };

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
function conversionPlan(backend: MigrationBackend, op: OperationName, params: Array<[string, unknown]>, installedBy: string): PlannedStatement[] {
  if (backend === 'sqlite') {
    const script = fs.readFileSync(path.join(SQLITE_SCRIPTS_DIR, `${op}.sql`), 'utf8').trim();
    const bound = params.map(([name, value]) => `--   :${name} = ${sqlLiteral(value)}`).join('\n');
    return [{ sql: `-- sql/sqlite/${op}.sql, run with:\n${bound}\n${script}` }];
  }
  return [...procedureInstall(op, installedBy), { sql: `CALL ${op}(${params.map(([, value]) => sqlLiteral(value)).join(', ')})` }];
}

function statementsOf(backend: MigrationBackend, text: string): PlannedStatement[] {
  // SQLite runs a step file whole in one transaction; MySQL statement by statement.
  return backend === 'sqlite' ? [{ sql: text.trim() }] : splitSqlStatements(text).map((sql) => ({ sql }));
}

async function callConversion(openStore: () => Store, op: OperationName, params: Record<string, unknown>): Promise<Record<string, unknown>> {
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
async function calibrate(openStore: () => Store, registration: FamilyRegistration): Promise<number> {
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

function result(source: AdoptionSource, outcome: AdoptionResult['outcome'], fields: Partial<AdoptionResult> = {}): AdoptionResult {
  return { source, outcome, problems: [], steps: [], conversion: null, calibrated: 0, ...fields };
}

// ---------------------------------------------------------------------------------------------
// topic-memory-pr1490

const TOPIC_OP = 'pc_aps_adopt_topic_memory_pr1490' satisfies OperationName;

function topicRetirePlan(backend: MigrationBackend): PlannedStatement[] {
  const plan = statementsOf(backend, adoptionFile(backend, 'topic_memory_pr1490.retire.sql'));
  return backend === 'oceanbase' ? [...plan, ...procedureRemoval(TOPIC_OP)] : plan;
}

/** The whole adoption as a reviewable script, from the phase the database is in. */
export async function topicMemoryPr1490Plan(ctx: AdoptionContext): Promise<string> {
  const { driver, migrator } = ctx;
  const backend = driver.backend;
  const phase = await topicMemoryPr1490Phase(driver);
  const after = CONVERSION_AFTER[backend];
  const binding = ctx.registration.bindingName;
  const parts: string[] = [
    `-- apsup migrate adopt ${TOPIC_MEMORY_PR1490} (database phase: ${phase}; binding ${binding})`,
    `-- preflight (read-only, before anything changes): migrations/${backend}/adopt/topic_memory_pr1490.preflight.sql`,
  ];
  if (phase === 'baseline') {
    parts.push(
      renderPlan(
        backend,
        `step 1: set aside (migrations/${backend}/adopt/topic_memory_pr1490.set_aside.sql)`,
        statementsOf(backend, adoptionFile(backend, 'topic_memory_pr1490.set_aside.sql')),
      ),
    );
  }
  if (phase === 'baseline' || phase === 'set_aside') {
    for (const m of await migrator.pendingPlans({ to: after })) parts.push(renderPlan(backend, `step 2: ${m.title}`, m.plan));
    parts.push(
      renderPlan(
        backend,
        `step 3: conversion ${TOPIC_OP}`,
        conversionPlan(backend, TOPIC_OP, [['binding_name', binding]], `adopt:${TOPIC_MEMORY_PR1490_LEDGER_NAME}`),
      ),
    );
  }
  const later = phase === 'baseline' || phase === 'set_aside' ? await migrator.pendingPlans({ after }) : await migrator.pendingPlans();
  for (const m of later) parts.push(renderPlan(backend, `step 4: ${m.title}`, m.plan));
  if (phase !== 'retired' && phase !== 'none' && !ctx.keepLegacy) {
    parts.push(renderPlan(backend, `step 5: retire (migrations/${backend}/adopt/topic_memory_pr1490.retire.sql)`, topicRetirePlan(backend)));
  }
  return `${parts.join('\n\n')}\n`;
}

export async function adoptTopicMemoryPr1490(ctx: AdoptionContext): Promise<AdoptionResult> {
  const { driver, migrator } = ctx;
  const backend = driver.backend;
  const source = TOPIC_MEMORY_PR1490;
  const binding = ctx.registration.bindingName;
  let phase = await topicMemoryPr1490Phase(driver);
  if (phase === 'none') {
    return result(source, 'refused', {
      problems: [
        {
          problem: 'no_baseline',
          bindingName: null,
          scopeId: null,
          detail: 'no Topic Memory PR #1490 tables (pc_artifact_processing_pending with the PR #1490 binding states) in this database',
        },
      ],
    });
  }
  if (phase === 'retired') return result(source, 'already_adopted', { steps: ['already adopted and retired'] });
  if (phase === 'baseline') {
    const problems = await runPreflight(driver, 'topic_memory_pr1490.preflight.sql', { binding_name: binding });
    if (problems.length > 0) return result(source, 'refused', { problems });
  }
  if (ctx.dryRun) return result(source, 'planned', { steps: [`phase ${phase}`], plan: await topicMemoryPr1490Plan(ctx) });

  const steps: string[] = [];
  let conversion: Record<string, unknown> | null = null;
  if (phase === 'baseline') {
    await driver.execute(statementsOf(backend, adoptionFile(backend, 'topic_memory_pr1490.set_aside.sql')));
    steps.push('set aside pc_artifact_processing_binding_states and pc_artifact_processing_leases as pc_aps_pr1490_*');
    phase = 'set_aside';
  }
  if (phase === 'set_aside') {
    const applied = await migrator.up({ to: CONVERSION_AFTER[backend], adopting: true });
    if (applied.length > 0) steps.push(`migrated: ${applied.join(', ')}`);
    if (backend === 'oceanbase') await driver.execute(procedureInstall(TOPIC_OP, `adopt:${TOPIC_MEMORY_PR1490_LEDGER_NAME}`));
    try {
      conversion = await callConversion(ctx.openStore, TOPIC_OP, { binding_name: binding });
    } catch (error) {
      if (!(error instanceof StoreError)) throw error;
      // The conversion rolled back as a whole; the set-aside tables still hold every legacy row.
      return result(source, 'refused', {
        steps,
        problems: [
          {
            problem: error.code,
            bindingName: binding,
            scopeId: null,
            detail:
              'the conversion was rolled back (nothing converted); the PR #1490 binding states and lease are set aside as pc_aps_pr1490_*: correct the data and run the adoption again to resume',
          },
        ],
      });
    }
    steps.push(`converted: ${String(conversion.summary)}`);
    phase = 'converted';
  }
  const rest = await migrator.up({ adopting: true });
  if (rest.length > 0) steps.push(`migrated: ${rest.join(', ')}`);
  if (!ctx.keepLegacy) {
    await driver.execute(topicRetirePlan(backend));
    steps.push('retired: dropped pc_artifact_processing_auto_wave_targets, pc_aps_pr1490_binding_states, pc_aps_pr1490_leases');
  } else {
    steps.push('kept the legacy tables (--keep-legacy): run the adoption again to retire them');
  }
  const calibrated = await calibrate(ctx.openStore, ctx.registration);
  return result(source, 'adopted', { steps, conversion, calibrated });
}

// ---------------------------------------------------------------------------------------------
// profile-apscheduler

const PROFILE_OP = 'pc_aps_adopt_profile_apscheduler' satisfies OperationName;

export type ProfileJobState = 'absent' | 'paused' | 'scheduled';

export interface ProfileDecision {
  jobState: ProfileJobState;
  nextRunTime: number | null;
  checkpointAt: Date | null;
  reason: string;
  problem: AdoptionProblem | null;
}

/**
 * Where the supervisor's cron checkpoint goes, from the APScheduler job (RFC 4 and 11):
 *   no job                    first migration: NULL, the first check catches up at once;
 *   paused job (NULL time)    not enabled: NULL, like a first enable;
 *   next_run_time is a fire   the fire before it, the latest fire APScheduler took: a missed
 *                             next_run_time (<= now) is due at once (one catch-up), a future
 *                             one stays the next check; never a second run of a taken fire;
 *   not a fire, <= now        the first-enable catch-up is still pending: NULL keeps it;
 *   not a fire, in the future the job runs another schedule: a problem (nothing changes).
 */
export function decideProfileCheckpoint(
  job: { state: ProfileJobState; nextRunTime: number | null },
  cron: { expression: string; timezone: string },
  dbNow: Date,
): ProfileDecision {
  const base = { jobState: job.state, nextRunTime: job.nextRunTime, problem: null };
  if (job.state === 'absent') return { ...base, checkpointAt: null, reason: 'no APScheduler job: first migration, the first check catches up at once' };
  if (job.state === 'paused' || job.nextRunTime === null) {
    return { ...base, checkpointAt: null, reason: 'paused APScheduler job: treated as a first enable, the first check catches up at once' };
  }
  const next = new Date(Math.round(job.nextRunTime * 1000));
  const fireAtOrBefore = cronFireAtOrBefore(cron.expression, cron.timezone, next);
  if (fireAtOrBefore.getTime() === next.getTime()) {
    const taken = cronFireBefore(cron.expression, cron.timezone, next);
    if (taken.getTime() > dbNow.getTime()) {
      return {
        ...base,
        checkpointAt: null,
        reason: 'next_run_time is ahead of the database clock',
        problem: {
          problem: 'job_ahead_of_clock',
          bindingName: null,
          scopeId: null,
          detail: `next_run_time ${next.toISOString()} implies a fire taken at ${taken.toISOString()}, after the database time ${dbNow.toISOString()}`,
        },
      };
    }
    return {
      ...base,
      checkpointAt: taken,
      reason:
        next.getTime() <= dbNow.getTime()
          ? `latest fire taken ${taken.toISOString()}; the fire of ${next.toISOString()} was missed: one catch-up at the first check`
          : `latest fire taken ${taken.toISOString()}; the next check is the fire of ${next.toISOString()}`,
    };
  }
  if (next.getTime() <= dbNow.getTime()) {
    return {
      ...base,
      checkpointAt: null,
      reason: `next_run_time ${next.toISOString()} is the pending first-enable catch-up (not a cron fire): kept, the first check catches up at once`,
    };
  }
  return {
    ...base,
    checkpointAt: null,
    reason: 'next_run_time is not a fire of the configured cron',
    problem: {
      problem: 'job_not_a_cron_fire',
      bindingName: null,
      scopeId: null,
      detail: `next_run_time ${next.toISOString()} is not a fire of cron "${cron.expression}" (${cron.timezone}): the job runs another schedule than the configuration`,
    },
  };
}

async function readProfileJob(driver: MigrationDriver, jobId: string): Promise<{ state: ProfileJobState; nextRunTime: number | null }> {
  const rows = await driver.read('SELECT next_run_time FROM apscheduler_jobs WHERE id = :job_id', { job_id: jobId });
  if (rows.length === 0) return { state: 'absent', nextRunTime: null };
  const value = rows[0].next_run_time;
  return value === null || value === undefined ? { state: 'paused', nextRunTime: null } : { state: 'scheduled', nextRunTime: Number(value) };
}

async function databaseNow(driver: MigrationDriver): Promise<Date> {
  const sql = driver.backend === 'sqlite' ? "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now') AS now" : 'SELECT UTC_TIMESTAMP(3) AS now';
  const rows = await driver.read(sql);
  return new Date(`${String(rows[0].now).replace(' ', 'T')}Z`);
}

export async function adoptProfileApscheduler(ctx: AdoptionContext): Promise<AdoptionResult> {
  const { driver, migrator } = ctx;
  const source = PROFILE_APSCHEDULER;
  const binding = ctx.registration.bindingName;
  const jobId = ctx.jobId ?? DEFAULT_PROFILE_JOB_ID;
  const refuse = (problem: string, detail: string) => result(source, 'refused', { problems: [{ problem, bindingName: binding, scopeId: null, detail }] });
  if (ctx.schedule.kind !== 'cron') {
    return refuse(
      'not_cron',
      `the effective schedule of ${ctx.registration.family} is ${ctx.schedule.kind}, not cron: configure the Profile cron and time zone before adopting its APScheduler job`,
    );
  }
  const status = await migrator.status();
  if (status.pending > 0 || status.drift) {
    return refuse('schema_not_current', 'the schema is not up to date: run `apsup migrate up` (after the Topic Memory adoption where it applies) first');
  }
  if (
    (await driver.tableExists('pc_aps_adoptions')) &&
    (await driver.read("SELECT 1 FROM pc_aps_adoptions WHERE adoption = 'profile_apscheduler'")).length > 0
  ) {
    return result(source, 'already_adopted', { steps: ['already adopted'] });
  }
  const problems = await runPreflight(driver, 'profile_apscheduler.preflight.sql', { binding_name: binding, job_id: jobId });
  let decision: ProfileDecision | null = null;
  if (problems.length === 0) {
    decision = decideProfileCheckpoint(await readProfileJob(driver, jobId), ctx.schedule, await databaseNow(driver));
    if (decision.problem) problems.push({ ...decision.problem, bindingName: binding });
  }
  if (problems.length > 0 || decision === null) return result(source, 'refused', { problems });

  const params: Array<[string, unknown]> = [
    ['binding_name', binding],
    ['job_id', jobId],
    ['expected_job_state', decision.jobState],
    ['expected_next_run_time', decision.nextRunTime],
    ['checkpoint_at', decision.checkpointAt ? toDbTime(decision.checkpointAt) : null],
  ];
  const backend = driver.backend;
  const plan = conversionPlan(backend, PROFILE_OP, params, `adopt:${PROFILE_APSCHEDULER_LEDGER_NAME}`);
  if (backend === 'oceanbase') plan.push(...procedureRemoval(PROFILE_OP));
  if (ctx.dryRun) {
    const text = [
      `-- apsup migrate adopt ${source} (binding ${binding}, job ${jobId})`,
      `-- preflight (read-only): migrations/${backend}/adopt/profile_apscheduler.preflight.sql`,
      `-- decision: ${decision.reason}`,
      renderPlan(backend, `conversion ${PROFILE_OP}`, plan),
    ].join('\n');
    return result(source, 'planned', { steps: [decision.reason], plan: `${text}\n` });
  }
  if (backend === 'oceanbase') await driver.execute(procedureInstall(PROFILE_OP, `adopt:${PROFILE_APSCHEDULER_LEDGER_NAME}`));
  let conversion: Record<string, unknown>;
  try {
    conversion = await callConversion(ctx.openStore, PROFILE_OP, Object.fromEntries(params));
  } finally {
    if (backend === 'oceanbase') await driver.execute(procedureRemoval(PROFILE_OP));
  }
  const calibrated = await calibrate(ctx.openStore, ctx.registration);
  return result(source, 'adopted', { steps: [decision.reason, `converted: ${String(conversion.summary)}`], conversion, calibrated });
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
