/**
 * Adoption of Profile's APScheduler job (profile-apscheduler, adoption.ts): the job's next run
 * judged against the configured cron becomes the supervisor's checkpoint, in one conversion.
 */
import {
  PROFILE_APSCHEDULER,
  calibrate,
  callConversion,
  conversionPlan,
  result,
  runPreflight,
  type AdoptionContext,
  type AdoptionProblem,
  type AdoptionResult,
} from './adoption-common.ts';
import type { OperationName } from '../store/operations.ts';
import { toDbTime } from '../store/rows.ts';
import { procedureInstall, procedureRemoval, renderPlan } from './plan.ts';
import type { MigrationDriver } from './drivers.ts';
import { cronFireAtOrBefore, cronFireBefore } from '../schedule/cron.ts';

// ---------------------------------------------------------------------------------------------
// profile-apscheduler

export const DEFAULT_PROFILE_JOB_ID = 'profile-refresh';
const PROFILE_APSCHEDULER_LEDGER_NAME = 'profile_apscheduler';
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
