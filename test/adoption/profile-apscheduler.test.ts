// RFC 11 / acceptance A13: `apsup migrate adopt profile-apscheduler` hands Profile's cron schedule
// over from the APScheduler sidecar's job store to the supervisor.
//
//   * Profile keeps its cron and time zone: the checkpoint recorded is the latest fire APScheduler
//     already took (the fire before the job's next_run_time). A future next_run_time stays the next
//     check; a missed one (<= now) is due at once, exactly one catch-up. No job, a paused job or a
//     still-pending first-enable catch-up keep the first-migration catch-up (checkpoint NULL).
//   * Never a second candidate for a fire already taken: the supervisor does not run the taken
//     fire again, and an explicit request for a scope that already has that fire's candidate
//     produces none.
//   * Never skips sources recorded before the switch: the family's pending-work provider re-marks
//     dirty exactly the scopes whose signals are ahead of their cursor, and the next fire (or the
//     missed-fire catch-up) turns each of them into one candidate.
//   * Refusals (a job that runs another schedule, a binding the supervisor already checked, a dry
//     run, a job row that moved between preflight and conversion) change nothing in the database.
//
// Expected fire times are computed by hand: '0 2 * * *' in Asia/Shanghai (UTC+8, no DST) is 18:00
// UTC every day.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { profile, PROFILE_BINDING } from '../../src/families/profile.ts';
import {
  adoptProfileApscheduler,
  decideProfileCheckpoint,
  DEFAULT_PROFILE_JOB_ID,
  formatAdoption,
  type AdoptionContext,
} from '../../src/migrations/adoption.ts';
import { procedureInstall, procedureRemoval } from '../../src/migrations/plan.ts';
import { openMigrationDriver, type MigrationDriver } from '../../src/migrations/drivers.ts';
import { Migrator } from '../../src/migrations/migrator.ts';
import type { Runtime } from '../../src/runtime/runtime.ts';
import { BaseStore } from '../../src/store/base-store.ts';
import { StoreError } from '../../src/store/errors.ts';
import { openStore } from '../../src/store/open.ts';
import { toDbTime } from '../../src/store/rows.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { createApschedulerStore, databaseFingerprint } from '../fixtures/legacy/pr1490.ts';
import { P, sinkDestination, startRuntime, statsOf } from '../fixtures/runtime-harness.ts';
import fs from 'node:fs';
import { checkProfileSidecar } from '../../src/cli/profile-sidecar-guard.ts';
import { makeFixtureDir, runCli } from '../fixtures/failover/harness.ts';
import { PROFILE_FAMILIES_MODULE_PATH } from '../fixtures/legacy/profile-families.ts';
import { parseRuntimeConfig } from '../../src/config/runtime-config.ts';
import { ConfigError } from '../../src/config/database-url.ts';
import { createLogger } from '../../src/logging.ts';

const DAY_MS = 86_400_000;
const CRON = { expression: '0 2 * * *', timezone: 'Asia/Shanghai' };
const OP = 'pc_aps_adopt_profile_apscheduler';
const OTHER_JOB = 'memory-sweep';

/** The latest 18:00 UTC at or before ms (a fire of 02:00 Asia/Shanghai). */
function latestFireAtOrBefore(ms: number): Date {
  const d = new Date(ms);
  const today = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), 18, 0, 0, 0);
  return new Date(today <= ms ? today : today - DAY_MS);
}

const epochSeconds = (d: Date): number => d.getTime() / 1000;
const dayBefore = (d: Date): Date => new Date(d.getTime() - DAY_MS);
const dayAfter = (d: Date): Date => new Date(d.getTime() + DAY_MS);

// ---------------------------------------------------------------------------------------------
// 1. The decision, without a database.

describe('decideProfileCheckpoint (0 2 * * * Asia/Shanghai = 18:00 UTC)', () => {
  const dbNow = new Date('2024-06-10T12:34:56.789Z');
  const nextFire = new Date('2024-06-10T18:00:00.000Z');
  const takenFire = new Date('2024-06-09T18:00:00.000Z');

  test('no job: first migration, NULL checkpoint (the first check catches up at once)', () => {
    const d = decideProfileCheckpoint({ state: 'absent', nextRunTime: null }, CRON, dbNow);
    assert.equal(d.jobState, 'absent');
    assert.equal(d.checkpointAt, null, 'no fire was taken');
    assert.equal(d.problem, null);
  });

  test('paused job: NULL checkpoint, like a first enable', () => {
    const d = decideProfileCheckpoint({ state: 'paused', nextRunTime: null }, CRON, dbNow);
    assert.equal(d.jobState, 'paused');
    assert.equal(d.checkpointAt, null);
    assert.equal(d.problem, null);
  });

  test('scheduled at the next fire (future): checkpoint = the fire one day before it', () => {
    const d = decideProfileCheckpoint({ state: 'scheduled', nextRunTime: epochSeconds(nextFire) }, CRON, dbNow);
    assert.equal(d.problem, null);
    assert.equal(d.checkpointAt?.toISOString(), takenFire.toISOString(), 'the latest fire APScheduler took');
    assert.equal(d.nextRunTime, epochSeconds(nextFire));
  });

  test('scheduled at a missed fire (<= now): checkpoint = the fire before it, so exactly one catch-up is due', () => {
    const d = decideProfileCheckpoint({ state: 'scheduled', nextRunTime: epochSeconds(takenFire) }, CRON, dbNow);
    assert.equal(d.problem, null);
    assert.equal(d.checkpointAt?.toISOString(), '2024-06-08T18:00:00.000Z');
    assert.ok(
      d.checkpointAt!.getTime() < takenFire.getTime() && takenFire.getTime() <= dbNow.getTime(),
      'the missed fire is after the checkpoint and not after now: due at the first check',
    );
  });

  test('scheduled exactly at dbNow, which is a fire: counts as missed (checkpoint = the day before)', () => {
    const now = new Date('2024-06-10T18:00:00.000Z');
    const d = decideProfileCheckpoint({ state: 'scheduled', nextRunTime: epochSeconds(now) }, CRON, now);
    assert.equal(d.problem, null);
    assert.equal(d.checkpointAt?.toISOString(), '2024-06-09T18:00:00.000Z');
  });

  test('not a fire and <= now (the pending first-enable catch-up): NULL checkpoint keeps the catch-up', () => {
    const firstEnable = new Date('2024-06-10T12:00:00.250Z');
    const d = decideProfileCheckpoint({ state: 'scheduled', nextRunTime: epochSeconds(firstEnable) }, CRON, dbNow);
    assert.equal(d.problem, null, 'not a problem');
    assert.equal(d.checkpointAt, null);
  });

  test('not a fire and in the future: problem job_not_a_cron_fire', () => {
    const d = decideProfileCheckpoint({ state: 'scheduled', nextRunTime: epochSeconds(nextFire) + 1800 }, CRON, dbNow);
    assert.equal(d.problem?.problem, 'job_not_a_cron_fire');
    assert.equal(d.checkpointAt, null);
  });

  test('a fire two days ahead (its previous fire is after dbNow): problem job_ahead_of_clock', () => {
    const d = decideProfileCheckpoint({ state: 'scheduled', nextRunTime: epochSeconds(dayAfter(nextFire)) }, CRON, dbNow);
    assert.equal(d.problem?.problem, 'job_ahead_of_clock');
    assert.equal(d.checkpointAt, null);
  });

  test('the cron and time zone are the ones given: 02:00 UTC is not a fire of 02:00 Asia/Shanghai', () => {
    const utcTwo = new Date('2024-06-11T02:00:00.000Z');
    const d = decideProfileCheckpoint({ state: 'scheduled', nextRunTime: epochSeconds(utcTwo) }, CRON, dbNow);
    assert.equal(d.problem?.problem, 'job_not_a_cron_fire');
    const asUtc = decideProfileCheckpoint({ state: 'scheduled', nextRunTime: epochSeconds(utcTwo) }, { expression: '0 2 * * *', timezone: 'UTC' }, dbNow);
    assert.equal(asUtc.problem, null);
    assert.equal(asUtc.checkpointAt?.toISOString(), '2024-06-10T02:00:00.000Z');
  });
});

// ---------------------------------------------------------------------------------------------
// Domain data of the APScheduler era (no dirty marks: the sidecar wrote none).

interface SeedScope {
  scopeId: string;
  signals: number;
  cursor: number | null;
  /** The scope's last candidate: at the taken fire, at the fire before it, or none. */
  candidate: 'taken' | 'earlier' | null;
}

const SCOPES: SeedScope[] = [
  { scopeId: 'pf-ahead-a', signals: 6, cursor: 4, candidate: 'taken' }, // 2 signals after the taken fire
  { scopeId: 'pf-ahead-b', signals: 9, cursor: 7, candidate: 'taken' }, // 2 signals after the taken fire
  { scopeId: 'pf-caught-up', signals: 5, cursor: 5, candidate: 'taken' }, // nothing new
  { scopeId: 'pf-earlier', signals: 8, cursor: 5, candidate: 'earlier' }, // nothing at the taken fire, 3 new since
  { scopeId: 'pf-no-cursor', signals: 3, cursor: null, candidate: null }, // signals, never processed
  { scopeId: 'pf-quiet', signals: 2, cursor: 2, candidate: 'earlier' }, // nothing new
];
const AHEAD = SCOPES.filter((s) => s.signals > (s.cursor ?? 0))
  .map((s) => s.scopeId)
  .sort();
const NOT_AHEAD = SCOPES.filter((s) => s.signals <= (s.cursor ?? 0))
  .map((s) => s.scopeId)
  .sort();

async function seedProfileDomain(fx: BackendFixture, taken: Date): Promise<void> {
  for (const s of SCOPES) {
    for (let seq = 1; seq <= s.signals; seq++) await fx.query('INSERT INTO ref_profile_signals (scope_id, seq) VALUES (?, ?)', [s.scopeId, seq]);
    if (s.cursor !== null) await fx.query('INSERT INTO ref_profile_cursors (scope_id, through_seq) VALUES (?, ?)', [s.scopeId, s.cursor]);
    if (s.candidate !== null) {
      const fire = s.candidate === 'taken' ? taken : dayBefore(taken);
      await fx.query("INSERT INTO ref_profile_candidates (scope_id, fire_at, through_seq, status) VALUES (?, ?, ?, 'pending_review')", [
        s.scopeId,
        toDbTime(fire),
        s.cursor ?? 0,
      ]);
    }
  }
}

interface CandidateRow {
  scopeId: string;
  fireAt: string;
  throughSeq: number;
  status: string;
}

/** A fresh job store and an unadopted binding on the same database (tests sharing one fixture). */
async function resetAdoption(fx: BackendFixture): Promise<void> {
  await fx.query('DROP TABLE IF EXISTS apscheduler_jobs');
  for (const t of [
    'pc_aps_adoptions',
    'pc_artifact_processing_binding_states',
    'pc_artifact_processing_intents',
    'ref_profile_signals',
    'ref_profile_cursors',
    'ref_profile_candidates',
  ])
    await fx.query(`DELETE FROM ${t}`);
}

async function candidates(fx: BackendFixture, scopeId?: string): Promise<CandidateRow[]> {
  const rows = await fx.query(
    `SELECT scope_id, fire_at, through_seq, status FROM ref_profile_candidates${scopeId ? ' WHERE scope_id = ?' : ''} ORDER BY scope_id, fire_at`,
    scopeId ? [scopeId] : [],
  );
  return rows.map((r) => ({ scopeId: String(r.scope_id), fireAt: String(r.fire_at), throughSeq: Number(r.through_seq), status: String(r.status) }));
}

async function cursorOf(fx: BackendFixture, scopeId: string): Promise<number | null> {
  const rows = await fx.query('SELECT through_seq FROM ref_profile_cursors WHERE scope_id = ?', [scopeId]);
  return rows.length === 0 ? null : Number(rows[0].through_seq);
}

async function jobRows(fx: BackendFixture): Promise<Array<{ id: string; nextRunTime: number | null; jobState: string }>> {
  const rows = await fx.query('SELECT id, next_run_time, job_state FROM apscheduler_jobs ORDER BY id');
  return rows.map((r) => ({
    id: String(r.id),
    nextRunTime: r.next_run_time === null ? null : Number(r.next_run_time),
    jobState: Buffer.isBuffer(r.job_state) ? r.job_state.toString('hex') : String(r.job_state),
  }));
}

async function adoptionRows(fx: BackendFixture): Promise<Array<{ adoption: string; state: string; summary: string }>> {
  const rows = await fx.query('SELECT adoption, state, summary FROM pc_aps_adoptions ORDER BY adoption');
  return rows.map((r) => ({ adoption: String(r.adoption), state: String(r.state), summary: String(r.summary) }));
}

async function routineNames(fx: BackendFixture): Promise<string[]> {
  const rows = await fx.query('SELECT ROUTINE_NAME AS name FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME = ?', [OP]);
  return rows.map((r) => String(r.name));
}

/** A conversion result's time column as database text (SQLite gives text, MySQL a string or a Date). */
function dbText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return toDbTime(value);
  return String(value);
}

/** Runs fn with an adoption context on the fixture's database (the driver is closed afterwards). */
async function withAdoption<T>(
  fx: BackendFixture,
  fn: (ctx: AdoptionContext, driver: MigrationDriver) => Promise<T>,
  options: Partial<AdoptionContext> = {},
): Promise<T> {
  const driver = await openMigrationDriver(fx.target);
  try {
    const ctx: AdoptionContext = {
      driver,
      migrator: new Migrator(driver),
      openStore: () => openStore(fx.target),
      registration: profile,
      schedule: profile.schedule,
      ...options,
    };
    return await fn(ctx, driver);
  } finally {
    await driver.close();
  }
}

function adopt(fx: BackendFixture, options: Partial<AdoptionContext> = {}) {
  return withAdoption(fx, (ctx) => adoptProfileApscheduler(ctx), options);
}

/**
 * The end-to-end tests must not straddle a real fire (18:00 UTC): a test starting within 30 s of
 * one waits until just after it, so the fire it computes is the one the runtime sees.
 */
async function clearOfNextFire(): Promise<void> {
  const untilNext = dayAfter(latestFireAtOrBefore(Date.now())).getTime() - Date.now();
  if (untilNext < 30_000) await new Promise((r) => setTimeout(r, untilNext + 1_000));
}

/** The fires around now: `taken` = latest 18:00 UTC <= now, `next` = the one after it. */
function firesNow(): { taken: Date; next: Date } {
  const taken = latestFireAtOrBefore(Date.now());
  return { taken, next: dayAfter(taken) };
}

// ---------------------------------------------------------------------------------------------
// 2. The adoption against a real database, per backend.

for (const backend of BACKENDS) {
  describe(`[${backend}] A13 adopt profile-apscheduler: checkpoint, job removal, calibration`, () => {
    let fx: BackendFixture;
    before(async () => {
      fx = await createBackend(backend);
    });
    after(async () => {
      await fx?.cleanup();
    });

    test('a job scheduled at the next fire: adopted, checkpoint = the fire taken, job gone, ahead scopes re-marked, candidates untouched', async () => {
      const { taken, next } = firesNow();
      await seedProfileDomain(fx, taken);
      await createApschedulerStore(fx, [
        { id: DEFAULT_PROFILE_JOB_ID, nextRunTime: epochSeconds(next) },
        { id: OTHER_JOB, nextRunTime: epochSeconds(next) + 300 },
      ]);
      const otherBefore = (await jobRows(fx)).find((j) => j.id === OTHER_JOB);
      const candidatesBefore = await candidates(fx);
      const signalsBefore = await fx.query('SELECT scope_id, seq FROM ref_profile_signals ORDER BY scope_id, seq');
      const cursorsBefore = await fx.query('SELECT scope_id, through_seq FROM ref_profile_cursors ORDER BY scope_id');

      const result = await adopt(fx);
      assert.equal(result.outcome, 'adopted', formatAdoption(result));
      assert.deepEqual(result.problems, []);
      const conv = result.conversion!;
      assert.equal(conv.binding_name, PROFILE_BINDING);
      assert.equal(conv.job_id, DEFAULT_PROFILE_JOB_ID);
      assert.equal(conv.job_state, 'scheduled');
      assert.equal(Number(conv.jobs_removed), 1);
      assert.equal(dbText(conv.last_schedule_checkpoint_at), toDbTime(taken), 'the conversion reports the checkpoint it recorded');
      assert.match(String(conv.summary), /profile-refresh/);

      const state = await fx.store.readBindingState(PROFILE_BINDING);
      assert.equal(state.lastScheduleCheckpointAt?.toISOString(), taken.toISOString(), 'checkpoint = the latest fire APScheduler took');
      assert.equal(state.scanGeneration, 0, 'no scan was run by the adoption');
      assert.equal(state.scanInProgress, false);

      const jobs = await jobRows(fx);
      assert.deepEqual(
        jobs.map((j) => j.id),
        [OTHER_JOB],
        'the Profile job is removed from the job store, the other job stays',
      );
      assert.deepEqual(jobs[0], otherBefore, 'the other job row is untouched');
      assert.deepEqual(
        (await adoptionRows(fx)).map((r) => [r.adoption, r.state]),
        [['profile_apscheduler', 'retired']],
      );

      // Sources recorded before the switch: exactly the scopes ahead of their cursor are dirty.
      assert.equal(result.calibrated, AHEAD.length, `calibrated ${result.calibrated}, expected ${AHEAD.join(', ')}`);
      assert.match(formatAdoption(result), new RegExp(`re-marked ${AHEAD.length} scope`));
      for (const scopeId of AHEAD) {
        const intent = await fx.store.readIntent(PROFILE_BINDING, scopeId);
        assert.ok(intent, `${scopeId} has an intent`);
        assert.ok(intent.dirtyGeneration > intent.cleanGeneration, `${scopeId} is dirty (${intent.dirtyGeneration}/${intent.cleanGeneration})`);
        assert.equal(intent.requestedGeneration, 0, `${scopeId}: calibration marks work, it requests nothing`);
      }
      for (const scopeId of NOT_AHEAD) assert.equal(await fx.store.readIntent(PROFILE_BINDING, scopeId), null, `${scopeId} has no new signal: no intent`);
      const intents = await fx.query('SELECT scope_id FROM pc_artifact_processing_intents WHERE binding_name = ? ORDER BY scope_id', [PROFILE_BINDING]);
      assert.deepEqual(
        intents.map((r) => String(r.scope_id)),
        AHEAD,
        'no other intent of the binding',
      );

      assert.deepEqual(await candidates(fx), candidatesBefore, 'candidates are not touched');
      assert.deepEqual(await fx.query('SELECT scope_id, seq FROM ref_profile_signals ORDER BY scope_id, seq'), signalsBefore, 'signals are not touched');
      assert.deepEqual(await fx.query('SELECT scope_id, through_seq FROM ref_profile_cursors ORDER BY scope_id'), cursorsBefore, 'cursors are not touched');

      // Once only.
      const again = await adopt(fx);
      assert.equal(again.outcome, 'already_adopted', formatAdoption(again));
      assert.equal((await fx.store.readBindingState(PROFILE_BINDING)).lastScheduleCheckpointAt?.toISOString(), taken.toISOString());

      await withAdoption(fx, async (ctx) => {
        const status = await ctx.migrator.status();
        assert.equal(status.drift, false, 'the conversion leaves no drift');
        assert.equal(status.pending, 0);
      });
      if (backend === 'mysql') assert.deepEqual(await routineNames(fx), [], 'the conversion procedure is dropped after it ran');
    });

    // RFC 11: never the APScheduler job and the supervisor on the same Profile progress. After the
    // adoption, a start refuses while the sidecar's job store holds the Profile job again.
    test('after the adoption a start refuses while the job store holds the Profile job again (api: an error line)', async () => {
      const configOf = (role: string) =>
        parseRuntimeConfig({ [`${P}DATABASE_URL`]: fx.url, [`${P}PROFILE_SCHEDULE_ENABLED`]: 'true', [`${P}ARTIFACT_PROCESSING_ROLE`]: role }, [profile]);
      const lines: Array<Record<string, unknown>> = [];
      const logger = createLogger({ level: 'info', destination: sinkDestination(lines) });
      const runs = backend === 'mysql' ? 'background' : 'all';
      await checkProfileSidecar(fx.store, configOf(runs), logger);
      const { next } = firesNow();
      await fx.query('INSERT INTO apscheduler_jobs (id, next_run_time, job_state) VALUES (?, ?, ?)', [
        DEFAULT_PROFILE_JOB_ID,
        epochSeconds(next),
        Buffer.from('8004', 'utf8'),
      ]);
      try {
        await assert.rejects(
          checkProfileSidecar(fx.store, configOf(runs), logger),
          (e: unknown) => e instanceof ConfigError && e.message.includes(`Profile job ${DEFAULT_PROFILE_JOB_ID}`) && e.message.includes(PROFILE_BINDING),
        );
        if (backend === 'mysql') {
          await checkProfileSidecar(fx.store, configOf('api'), logger);
          await waitFor(() => lines.some((l) => l.level === 50 && l.jobId === DEFAULT_PROFILE_JOB_ID), 2_000);
        }
        // Through `apsup run`: exit 2 before any term is taken.
        const dir = makeFixtureDir(`profile-sidecar-${backend}`);
        try {
          const run = await runCli(
            ['run', '--families', PROFILE_FAMILIES_MODULE_PATH, '--role', runs],
            fx.url,
            dir,
            { [`${P}PROFILE_SCHEDULE_ENABLED`]: 'true' },
            60_000,
          );
          assert.equal(run.code, 2, run.stderr);
          assert.match(run.stderr, /APScheduler job store holds the Profile job profile-refresh again/);
          assert.doesNotMatch(run.stdout, /term acquired/);
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      } finally {
        await fx.query('DELETE FROM apscheduler_jobs WHERE id = ?', [DEFAULT_PROFILE_JOB_ID]);
      }
      await checkProfileSidecar(fx.store, configOf(runs), logger);
    });
  });

  describe(`[${backend}] A13 adopt profile-apscheduler: job states`, () => {
    let fx: BackendFixture;
    before(async () => {
      fx = await createBackend(backend);
    });
    after(async () => {
      await fx?.cleanup();
    });
    // Each test starts from a fresh job store and an unadopted binding on the same database.
    const reset = () => resetAdoption(fx);

    test('missed fire: next_run_time = the latest fire <= now -> checkpoint one day before it (one catch-up due)', async () => {
      await reset();
      const { taken: missed } = firesNow();
      await seedProfileDomain(fx, dayBefore(missed));
      await createApschedulerStore(fx, [{ id: DEFAULT_PROFILE_JOB_ID, nextRunTime: epochSeconds(missed) }]);
      const result = await adopt(fx);
      assert.equal(result.outcome, 'adopted', formatAdoption(result));
      const state = await fx.store.readBindingState(PROFILE_BINDING);
      assert.equal(state.lastScheduleCheckpointAt?.toISOString(), dayBefore(missed).toISOString(), 'checkpoint = the fire before the missed one');
      assert.ok(missed.getTime() <= state.dbNow.getTime(), 'the missed fire is due at once');
      assert.deepEqual(await jobRows(fx), []);
      assert.equal(result.calibrated, AHEAD.length);
    });

    test('no Profile job (other jobs present): checkpoint NULL, job_state absent, the other job untouched', async () => {
      await reset();
      const { next } = firesNow();
      await seedProfileDomain(fx, dayBefore(next));
      await createApschedulerStore(fx, [{ id: OTHER_JOB, nextRunTime: epochSeconds(next) + 600 }]);
      const jobsBefore = await jobRows(fx);
      const result = await adopt(fx);
      assert.equal(result.outcome, 'adopted', formatAdoption(result));
      assert.equal(result.conversion!.job_state, 'absent');
      assert.equal(Number(result.conversion!.jobs_removed), 0);
      assert.equal(dbText(result.conversion!.last_schedule_checkpoint_at), null);
      assert.equal((await fx.store.readBindingState(PROFILE_BINDING)).lastScheduleCheckpointAt, null, 'first migration: the first check catches up');
      assert.deepEqual(await jobRows(fx), jobsBefore, 'the other job is untouched');
      assert.deepEqual(
        (await adoptionRows(fx)).map((r) => [r.adoption, r.state]),
        [['profile_apscheduler', 'retired']],
      );
    });

    test('paused Profile job: checkpoint NULL, job removed', async () => {
      await reset();
      await createApschedulerStore(fx, [{ id: DEFAULT_PROFILE_JOB_ID, nextRunTime: null }]);
      const result = await adopt(fx);
      assert.equal(result.outcome, 'adopted', formatAdoption(result));
      assert.equal(result.conversion!.job_state, 'paused');
      assert.equal(Number(result.conversion!.jobs_removed), 1);
      assert.equal((await fx.store.readBindingState(PROFILE_BINDING)).lastScheduleCheckpointAt, null);
      assert.deepEqual(await jobRows(fx), []);
    });

    test('pending first-enable catch-up (next_run_time <= now, not a fire): checkpoint NULL, job removed', async () => {
      await reset();
      // The first enable added the job with an immediate run time that has not run yet.
      let firstEnable = Date.now() / 1000 - 90.5;
      if (firstEnable % 3600 === 0) firstEnable -= 1;
      await createApschedulerStore(fx, [{ id: DEFAULT_PROFILE_JOB_ID, nextRunTime: firstEnable }]);
      const result = await adopt(fx);
      assert.equal(result.outcome, 'adopted', formatAdoption(result));
      assert.equal(result.conversion!.job_state, 'scheduled');
      assert.equal((await fx.store.readBindingState(PROFILE_BINDING)).lastScheduleCheckpointAt, null, 'the catch-up stays pending');
      assert.deepEqual(await jobRows(fx), []);
    });
  });

  describe(`[${backend}] A13 adopt profile-apscheduler: refusals and dry run change nothing`, () => {
    let fx: BackendFixture;
    before(async () => {
      fx = await createBackend(backend);
    });
    after(async () => {
      await fx?.cleanup();
    });
    const reset = () => resetAdoption(fx);

    test('next_run_time in the future but not a fire: refused with job_not_a_cron_fire, nothing changed', async () => {
      await reset();
      const { taken, next } = firesNow();
      await seedProfileDomain(fx, taken);
      await createApschedulerStore(fx, [
        { id: DEFAULT_PROFILE_JOB_ID, nextRunTime: epochSeconds(next) + 1800 },
        { id: OTHER_JOB, nextRunTime: epochSeconds(next) },
      ]);
      const before = await databaseFingerprint(fx);
      const result = await adopt(fx);
      assert.equal(result.outcome, 'refused', formatAdoption(result));
      assert.deepEqual(
        result.problems.map((p) => [p.problem, p.bindingName]),
        [['job_not_a_cron_fire', PROFILE_BINDING]],
      );
      assert.match(formatAdoption(result), /nothing was changed/);
      assert.equal(result.calibrated, 0);
      assert.equal(await databaseFingerprint(fx), before, 'a refusal changes nothing');
    });

    test('a binding the supervisor already checked: refused with already_supervised, nothing changed', async () => {
      await reset();
      const { taken, next } = firesNow();
      await seedProfileDomain(fx, taken);
      await createApschedulerStore(fx, [{ id: DEFAULT_PROFILE_JOB_ID, nextRunTime: epochSeconds(next) }]);
      await fx.query('INSERT INTO pc_artifact_processing_binding_states (binding_name, last_schedule_checkpoint_at) VALUES (?, ?)', [
        PROFILE_BINDING,
        toDbTime(taken),
      ]);
      const before = await databaseFingerprint(fx);
      const result = await adopt(fx);
      assert.equal(result.outcome, 'refused', formatAdoption(result));
      assert.deepEqual(
        result.problems.map((p) => [p.problem, p.bindingName]),
        [['already_supervised', PROFILE_BINDING]],
      );
      assert.equal(await databaseFingerprint(fx), before, 'a refusal changes nothing');
    });

    test('dry run: planned, the plan names the conversion (a CALL on MySQL), nothing changed', async () => {
      await reset();
      const { taken, next } = firesNow();
      await seedProfileDomain(fx, taken);
      await createApschedulerStore(fx, [{ id: DEFAULT_PROFILE_JOB_ID, nextRunTime: epochSeconds(next) }]);
      const before = await databaseFingerprint(fx);
      const result = await adopt(fx, { dryRun: true });
      assert.equal(result.outcome, 'planned', formatAdoption(result));
      const plan = result.plan ?? '';
      assert.match(plan, /pc_aps_adopt_profile_apscheduler/);
      assert.ok(plan.includes(toDbTime(taken)), `the plan shows the checkpoint ${toDbTime(taken)}:\n${plan}`);
      if (backend === 'mysql') {
        assert.ok(
          plan.includes(`CALL ${OP}('${PROFILE_BINDING}', '${DEFAULT_PROFILE_JOB_ID}', 'scheduled', ${epochSeconds(next)}, '${toDbTime(taken)}')`),
          plan,
        );
        assert.match(plan, new RegExp(`DROP PROCEDURE IF EXISTS ${OP}`));
      } else {
        assert.match(plan, /:checkpoint_at = '/);
      }
      assert.equal(result.calibrated, 0);
      assert.equal(await databaseFingerprint(fx), before, 'a dry run changes nothing');
    });

    test('the job row moved between preflight and conversion: the operation rejects (adoption_inconsistent), nothing changed', async () => {
      await reset();
      const { taken, next } = firesNow();
      await seedProfileDomain(fx, taken);
      await createApschedulerStore(fx, [{ id: DEFAULT_PROFILE_JOB_ID, nextRunTime: epochSeconds(next) }]);
      await withAdoption(fx, async (_ctx, driver) => {
        if (backend === 'mysql') await driver.execute(procedureInstall(OP, 'test'));
        try {
          // The preflight saw next_run_time = next; APScheduler then ran and moved it a day on.
          await fx.query('UPDATE apscheduler_jobs SET next_run_time = ? WHERE id = ?', [epochSeconds(dayAfter(next)), DEFAULT_PROFILE_JOB_ID]);
          const before = await databaseFingerprint(fx);
          const store = fx.store;
          assert.ok(store instanceof BaseStore);
          const call = (params: Record<string, string | number | null>) =>
            store.callOperation(OP, {
              binding_name: PROFILE_BINDING,
              job_id: DEFAULT_PROFILE_JOB_ID,
              expected_job_state: 'scheduled',
              expected_next_run_time: epochSeconds(next),
              checkpoint_at: toDbTime(taken),
              ...params,
            });
          const code = (expected: string) => (e: unknown) => {
            assert.ok(e instanceof StoreError, `a StoreError, got ${String(e)}`);
            assert.equal(e.code, expected);
            return true;
          };
          await assert.rejects(call({}), code('adoption_inconsistent'), 'next_run_time differs from the one read');
          await assert.rejects(
            call({ expected_job_state: 'absent', expected_next_run_time: null, checkpoint_at: null }),
            code('adoption_inconsistent'),
            'a job appeared',
          );
          await assert.rejects(
            call({ expected_job_state: 'paused', expected_next_run_time: null, checkpoint_at: null }),
            code('adoption_inconsistent'),
            'the job is not paused',
          );
          // With the row as it is now, a checkpoint after the database time is refused too.
          await assert.rejects(call({ expected_next_run_time: epochSeconds(dayAfter(next)), checkpoint_at: toDbTime(next) }), code('cron_fire_in_future'));
          assert.equal(await databaseFingerprint(fx), before, 'a rejected conversion changes nothing');
          const state = await fx.store.readBindingState(PROFILE_BINDING);
          assert.equal(state.lastScheduleCheckpointAt, null, 'no checkpoint recorded');
          assert.deepEqual(
            (await jobRows(fx)).map((j) => [j.id, j.nextRunTime]),
            [[DEFAULT_PROFILE_JOB_ID, epochSeconds(dayAfter(next))]],
            'the job row is kept',
          );
          assert.deepEqual(await adoptionRows(fx), []);
        } finally {
          if (backend === 'mysql') await driver.execute(procedureRemoval(OP));
        }
      });
    });
  });

  // -------------------------------------------------------------------------------------------
  // 3. End to end: the runtime after the adoption.

  describe(`[${backend}] A13 end to end: no second candidate for a taken fire, no source skipped`, () => {
    const env = { [`${P}PROFILE_MAX_WORKERS`]: '2', [`${P}PROFILE_SCHEDULE_ENABLED`]: 'true' };

    test('next fire in the future: no automatic scan; explicit requests produce a candidate only where the taken fire has none', async () => {
      await clearOfNextFire();
      const fx = await createBackend(backend);
      let runtime: Runtime | undefined;
      try {
        const { taken, next } = firesNow();
        await seedProfileDomain(fx, taken);
        await createApschedulerStore(fx, [{ id: DEFAULT_PROFILE_JOB_ID, nextRunTime: epochSeconds(next) }]);
        const result = await adopt(fx);
        assert.equal(result.outcome, 'adopted', formatAdoption(result));
        const candidatesBefore = await candidates(fx);

        runtime = await startRuntime(fx, [profile], { env });
        // The first check finds the taken fire already checked (it has run once nextDueAt is set):
        // the next due time is the next fire, and the scan generation checked below stays 0.
        const nextDue = (await waitFor(() => statsOf(runtime!, 'profile').nextDueAt, 20_000))!;
        assert.ok(Math.abs(Date.parse(nextDue) - next.getTime()) < 5_000, `next due ${nextDue}, expected the next fire ${next.toISOString()}`);

        const requested = new Map<string, number>();
        for (const scopeId of ['pf-ahead-a', 'pf-no-cursor', 'pf-earlier']) {
          requested.set(scopeId, (await fx.store.acceptRequest(PROFILE_BINDING, scopeId)).requestedGeneration);
        }
        await waitFor(async () => {
          for (const [scopeId, generation] of requested) {
            const intent = await fx.store.readIntent(PROFILE_BINDING, scopeId);
            if (!intent || intent.handledGeneration < generation) return false;
          }
          return true;
        }, 20_000);

        // (i) the taken fire already has its candidate: no second one, the newer signals stay owed.
        const aheadA = await candidates(fx, 'pf-ahead-a');
        assert.deepEqual(
          aheadA.map((c) => [c.fireAt, c.throughSeq]),
          [[toDbTime(taken), 4]],
          'exactly the one candidate of the taken fire',
        );
        assert.equal(await cursorOf(fx, 'pf-ahead-a'), 4, 'cursor not advanced: signals 5..6 wait for the next fire');
        const aheadIntent = (await fx.store.readIntent(PROFILE_BINDING, 'pf-ahead-a'))!;
        assert.ok(aheadIntent.dirtyGeneration > aheadIntent.cleanGeneration, 'pf-ahead-a stays dirty for the next fire');

        // (ii) signals but no candidate: exactly one, for the taken fire.
        const noCursor = await candidates(fx, 'pf-no-cursor');
        assert.deepEqual(
          noCursor.map((c) => [c.fireAt, c.throughSeq, c.status]),
          [[toDbTime(taken), 3, 'pending_review']],
        );
        assert.equal(await cursorOf(fx, 'pf-no-cursor'), 3);
        // (iii) an earlier fire's candidate does not stand for the taken fire.
        const earlier = await candidates(fx, 'pf-earlier');
        assert.deepEqual(
          earlier.map((c) => [c.fireAt, c.throughSeq]),
          [
            [toDbTime(dayBefore(taken)), 5],
            [toDbTime(taken), 8],
          ],
        );

        // Nothing else was processed: no automatic scan ran the taken fire again.
        const others = (await candidates(fx)).filter((c) => !requested.has(c.scopeId));
        assert.deepEqual(
          others,
          candidatesBefore.filter((c) => !requested.has(c.scopeId)),
          'unrequested scopes untouched',
        );
        const state = await fx.store.readBindingState(PROFILE_BINDING);
        assert.equal(state.scanGeneration, 0, 'no automatic scan before the next fire');
        assert.equal(state.lastScheduleCheckpointAt?.toISOString(), taken.toISOString(), 'checkpoint still the taken fire');
      } finally {
        await runtime?.stop();
        await fx.cleanup();
      }
    });

    test('missed fire: the catch-up scan runs at once; each scope ahead of its cursor gets exactly one new candidate', async () => {
      await clearOfNextFire();
      const fx = await createBackend(backend);
      let runtime: Runtime | undefined;
      try {
        const { taken: missed } = firesNow();
        const takenBefore = dayBefore(missed);
        await seedProfileDomain(fx, takenBefore);
        await createApschedulerStore(fx, [{ id: DEFAULT_PROFILE_JOB_ID, nextRunTime: epochSeconds(missed) }]);
        const result = await adopt(fx);
        assert.equal(result.outcome, 'adopted', formatAdoption(result));
        assert.equal((await fx.store.readBindingState(PROFILE_BINDING)).lastScheduleCheckpointAt?.toISOString(), takenBefore.toISOString());
        const candidatesBefore = await candidates(fx);

        runtime = await startRuntime(fx, [profile], { env });
        await waitFor(async () => {
          const state = await fx.store.readBindingState(PROFILE_BINDING);
          if (state.scanGeneration < 1 || state.scanInProgress) return false;
          for (const scopeId of AHEAD) {
            const intent = await fx.store.readIntent(PROFILE_BINDING, scopeId);
            if (!intent || intent.requestedGeneration === 0 || intent.handledGeneration < intent.requestedGeneration) return false;
          }
          return true;
        }, 20_000);

        const state = await fx.store.readBindingState(PROFILE_BINDING);
        assert.equal(state.scanGeneration, 1, 'exactly one catch-up scan for the missed fire');
        assert.equal(state.lastScheduleCheckpointAt?.toISOString(), missed.toISOString(), 'checkpoint = the missed fire');
        const after = await candidates(fx);
        const added = after.filter((c) => !candidatesBefore.some((b) => b.scopeId === c.scopeId && b.fireAt === c.fireAt));
        assert.deepEqual(
          added.map((c) => [c.scopeId, c.fireAt, c.throughSeq]).sort(),
          SCOPES.filter((s) => AHEAD.includes(s.scopeId))
            .map((s) => [s.scopeId, toDbTime(missed), s.signals])
            .sort(),
          'one new candidate, for the missed fire, per scope ahead of its cursor (sources before the switch not skipped)',
        );
        for (const c of candidatesBefore)
          assert.ok(
            after.some((a) => a.scopeId === c.scopeId && a.fireAt === c.fireAt && a.throughSeq === c.throughSeq),
            `${c.scopeId} keeps its candidate of ${c.fireAt}`,
          );
        for (const s of SCOPES) assert.equal(await cursorOf(fx, s.scopeId), AHEAD.includes(s.scopeId) ? s.signals : s.cursor, `${s.scopeId} cursor`);
        for (const scopeId of AHEAD) {
          const intent = (await fx.store.readIntent(PROFILE_BINDING, scopeId))!;
          assert.equal(intent.cleanGeneration, intent.dirtyGeneration, `${scopeId} is clean after its candidate`);
        }
      } finally {
        await runtime?.stop();
        await fx.cleanup();
      }
    });
  });
}
