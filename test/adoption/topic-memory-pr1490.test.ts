// Adoption of a Topic Memory PR #1490 database (RFC 11, acceptance item 12), on both backends:
// legacy fixtures built from the documented baseline (migrations/<backend>/adopt/) with
// realistic data. Pins: uncovered source pending -> ordinary work; unconfirmed flush -> accepted
// request; unfinished auto-wave target -> accepted request; last_auto_wave_completed_at ->
// checkpoint only without automatic work in progress; pending order kept; the old lease fenced;
// Topic pending and cursors untouched; the old scheduling tables dropped only after the checked
// conversion; inconsistent data, a live old supervisor or a different schema stop with a report
// and change nothing; plain `migrate up` refuses and `migrate sql` shows the adoption plan; an
// interrupted adoption resumes; and the runtime then processes every converted duty in source
// order while an unexpired check interval keeps its remaining wait.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { adoptTopicMemoryPr1490, adoptionFile, type AdoptionContext, type AdoptionResult } from '../../src/migrations/adoption.ts';
import { AdoptionRequiredError, topicMemoryPr1490Phase } from '../../src/migrations/adoption-detect.ts';
import { openMigrationDriver, type MigrationDriver } from '../../src/migrations/drivers.ts';
import { Migrator } from '../../src/migrations/migrator.ts';
import { splitSqlStatements } from '../../src/sql-split.ts';
import { BaseStore } from '../../src/store/base-store.ts';
import { StoreError } from '../../src/store/errors.ts';
import { openStore } from '../../src/store/open.ts';
import { BACKENDS, createBackend, waitFor, type BackendFixture } from '../helpers/backends.ts';
import { killEverything, makeFixtureDir, runCli } from '../fixtures/failover/harness.ts';
import { P, startRuntime } from '../fixtures/runtime-harness.ts';
import { FAMILIES_MODULE_PATH, legacyTopicMemory } from '../fixtures/legacy/pr1490-families.ts';
import { WINDOW } from '../fixtures/legacy/pr1490-topic.processor.ts';
import {
  TOPIC_BINDING,
  createPr1490Database,
  databaseFingerprint,
  expectedIntents,
  pr1490Data,
  type Pr1490Data,
  type Pr1490Options,
} from '../fixtures/legacy/pr1490.ts';

const TABLES_KEPT = ['pc_artifact_processing_pending', 'pc_artifact_processing_source_cursors'];

async function rowsOf(fx: BackendFixture, table: string): Promise<string[]> {
  return (await fx.query(`SELECT * FROM ${table}`)).map((r) => JSON.stringify(Object.entries(r).map(([k, v]) => [k, v === null ? null : String(v)]))).sort();
}

for (const backend of BACKENDS) {
  describe(`[${backend}] apsup migrate adopt topic-memory-pr1490`, () => {
    let fx: BackendFixture;
    let driver: MigrationDriver;

    beforeEach(async () => {
      fx = await createBackend(backend, { migrate: false });
      driver = await openMigrationDriver(fx.target);
    });

    afterEach(async () => {
      await driver?.close();
      await fx?.cleanup();
    });

    const context = (extra: Partial<AdoptionContext> = {}): AdoptionContext => ({
      driver,
      migrator: new Migrator(driver),
      openStore: () => openStore(fx.target),
      registration: legacyTopicMemory,
      schedule: legacyTopicMemory.schedule,
      ...extra,
    });

    async function legacy(options: Pr1490Options): Promise<Pr1490Data> {
      const data = pr1490Data(options);
      await createPr1490Database(fx, data);
      return data;
    }

    async function refusedUnchanged(run: () => Promise<AdoptionResult>): Promise<AdoptionResult> {
      const before = await databaseFingerprint(fx);
      const r = await run();
      assert.equal(r.outcome, 'refused', JSON.stringify(r));
      assert.equal(await databaseFingerprint(fx), before, 'a refused adoption changes nothing');
      return r;
    }

    test('a finished wave: dirty for uncovered source, requests for unconfirmed flushes, the checkpoint kept, order kept, the old lease fenced, Topic tables untouched, old tables retired', async () => {
      const data = await legacy({ waveInProgress: false, bulk: 300 });
      const kept = await Promise.all(TABLES_KEPT.map((t) => rowsOf(fx, t)));
      const r = await adoptTopicMemoryPr1490(context());
      assert.equal(r.outcome, 'adopted', JSON.stringify(r));

      const expected = expectedIntents(data);
      const rows = await fx.query(
        'SELECT scope_id, pending_sequence, dirty_generation, clean_generation, requested_generation, handled_generation FROM pc_artifact_processing_intents WHERE binding_name = ? ORDER BY pending_sequence',
        [TOPIC_BINDING],
      );
      const got = new Map(rows.map((x) => [String(x.scope_id), [Number(x.dirty_generation), Number(x.requested_generation)] as [number, number]]));
      assert.deepEqual([...got.entries()].sort(), [...expected.entries()].sort());
      assert.ok(rows.every((x) => Number(x.clean_generation) === 0 && Number(x.handled_generation) === 0));
      assert.equal(got.get('tm-covered'), undefined, 'covered source without flush needs nothing');
      assert.equal(got.get('tm-flush-done'), undefined, 'a confirmed flush is not owed');
      assert.deepEqual(got.get('tm-flush-open'), [0, 1], 'an unconfirmed flush of covered source is an accepted request');
      assert.deepEqual(got.get('tm-flush-uncovered'), [1, 1]);
      assert.deepEqual(got.get('tm-no-cursor'), [1, 0], 'a missing cursor is position 0');
      // Pending order: the legacy created_at order is the scan order.
      const createdOrder = data.scopes.filter((s) => expected.has(s.scopeId)).map((s) => s.scopeId);
      assert.deepEqual(
        rows.map((x) => String(x.scope_id)),
        createdOrder,
      );
      assert.equal(r.conversion?.dirty_keys !== undefined && Number(r.conversion.dirty_keys), [...expected.values()].filter(([d]) => d === 1).length);

      const state = await fx.store.readBindingState(TOPIC_BINDING);
      assert.equal(
        state.lastScheduleCheckpointAt?.toISOString(),
        new Date(`${data.binding.lastCompletedAt!.replace(' ', 'T')}Z`).toISOString(),
        'no automatic work in progress: last_auto_wave_completed_at is the checkpoint (the remaining wait is kept)',
      );
      assert.equal(state.scanInProgress, false);
      const lease = await fx.store.readLease('global');
      assert.deepEqual(
        [lease?.holderId ?? null, lease?.supervisorGeneration],
        [null, data.lease.generation + 1],
        'the PR #1490 term is fenced out, its generation continued',
      );
      assert.equal((await fx.store.readRuntimeMode()).mode, 'global');

      assert.deepEqual(await Promise.all(TABLES_KEPT.map((t) => rowsOf(fx, t))), kept, 'Topic pending and cursors are untouched');
      for (const gone of ['pc_artifact_processing_auto_wave_targets', 'pc_aps_pr1490_binding_states', 'pc_aps_pr1490_leases']) {
        assert.equal(await driver.tableExists(gone), false, `${gone} retired`);
      }
      assert.deepEqual(
        (await fx.query('SELECT adoption, state FROM pc_aps_adoptions')).map((x) => [x.adoption, x.state]),
        [['topic_memory_pr1490', 'retired']],
      );
      const status = await new Migrator(driver).status();
      assert.equal(status.drift, false, JSON.stringify(status));
      assert.equal(status.pending, 0);
      if (backend === 'mysql') {
        const routines = await fx.query(
          "SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_NAME LIKE 'pc_aps_adopt%'",
        );
        assert.deepEqual(routines, [], 'the conversion procedure is dropped with the old tables');
      }
      assert.equal(await topicMemoryPr1490Phase(driver), 'retired');
      assert.equal((await adoptTopicMemoryPr1490(context())).outcome, 'already_adopted');
    });

    test('a wave in progress: every unfinished target becomes an accepted request and the checkpoint stays NULL', async () => {
      const data = await legacy({ waveInProgress: true });
      const r = await adoptTopicMemoryPr1490(context());
      assert.equal(r.outcome, 'adopted', JSON.stringify(r));
      assert.deepEqual(
        [await fx.store.readIntent(TOPIC_BINDING, 'tm-wave-running')].map((i) => [i?.dirtyGeneration, i?.requestedGeneration]),
        [[0, 1]],
        'a started, unfinished target of covered source keeps its recovery duty',
      );
      assert.deepEqual(
        [await fx.store.readIntent(TOPIC_BINDING, 'tm-wave-queued')].map((i) => [i?.dirtyGeneration, i?.requestedGeneration]),
        [[1, 1]],
      );
      assert.equal(await fx.store.readIntent(TOPIC_BINDING, 'tm-wave-done'), null, 'a finished target with nothing pending needs nothing');
      assert.equal(
        (await fx.store.readBindingState(TOPIC_BINDING)).lastScheduleCheckpointAt,
        null,
        'automatic work was in progress: the old completion time cannot be the checkpoint',
      );
      assert.equal(Number(r.conversion?.requested_keys), [...expectedIntents(data).values()].filter(([, o]) => o === 1).length);
    });

    const inconsistencies: Array<[string, string, (fx: BackendFixture) => Promise<unknown>]> = [
      [
        'flush_confirmed_beyond_request',
        'a flush confirmed beyond its request',
        (f) => f.query('UPDATE pc_artifact_processing_pending SET flushed_generation = 9 WHERE scope_id = ?', ['tm-flush-open']),
      ],
      [
        'cursor_beyond_source',
        'a cursor beyond its announced source',
        (f) => f.query('UPDATE pc_artifact_processing_source_cursors SET source_cursor = 99 WHERE scope_id = ?', ['tm-covered']),
      ],
      [
        'unmapped_binding',
        'rows of a binding no family maps',
        (f) => f.query("INSERT INTO pc_artifact_processing_pending (binding_name, scope_id, source_through) VALUES ('memory.sweep', 'm1', 3)"),
      ],
      [
        'target_times',
        'a target completed before it started',
        (f) =>
          f.query('UPDATE pc_artifact_processing_auto_wave_targets SET started_at = NULL WHERE scope_id = ? AND auto_wave_generation = 6', ['tm-uncovered']),
      ],
      [
        'target_beyond_source',
        'an unfinished target frozen beyond the announced source',
        (f) =>
          f.query('UPDATE pc_artifact_processing_auto_wave_targets SET source_through = 999 WHERE scope_id = ? AND completed_at IS NULL', ['tm-wave-running']),
      ],
      [
        'wave_completed_with_unfinished_target',
        'a finished wave with an unfinished target',
        (f) => f.query('UPDATE pc_artifact_processing_binding_states SET auto_wave_started_at = NULL'),
      ],
      [
        'target_of_unknown_wave',
        'a target of a wave never started',
        (f) =>
          f.query(
            "INSERT INTO pc_artifact_processing_auto_wave_targets (binding_name, auto_wave_generation, scope_id, source_through) VALUES (?, 99, 'tm-covered', 7)",
            [TOPIC_BINDING],
          ),
      ],
    ];
    for (const [problem, what, corrupt] of inconsistencies) {
      test(`inconsistent data (${what}) stops with a report naming ${problem} and changes nothing`, async () => {
        await legacy({ waveInProgress: true, bulk: 20 });
        await corrupt(fx);
        const r = await refusedUnchanged(() => adoptTopicMemoryPr1490(context()));
        assert.ok(
          r.problems.some((p) => p.problem === problem),
          JSON.stringify(r.problems),
        );
        assert.equal(await topicMemoryPr1490Phase(driver), 'baseline');
      });
    }

    test('a live PR #1490 supervisor refuses the adoption; a different deployed schema is reported before any other check', async () => {
      await legacy({ waveInProgress: false, liveLease: true });
      let r = await refusedUnchanged(() => adoptTopicMemoryPr1490(context()));
      assert.deepEqual(
        r.problems.map((p) => p.problem),
        ['legacy_supervisor_live'],
      );
      await fx.query("UPDATE pc_artifact_processing_leases SET expires_at = '2020-01-01 00:00:00.000'");
      await fx.query('ALTER TABLE pc_artifact_processing_pending DROP COLUMN flushed_generation');
      r = await refusedUnchanged(() => adoptTopicMemoryPr1490(context()));
      assert.deepEqual(
        r.problems.map((p) => [p.problem, p.detail]),
        [['baseline_shape', 'missing pc_artifact_processing_pending.flushed_generation']],
      );
    });

    test('plain migrate up refuses a PR #1490 database, migrate sql shows the adoption plan, a dry run changes nothing', async () => {
      await legacy({ waveInProgress: true });
      const before = await databaseFingerprint(fx);
      await assert.rejects(
        new Migrator(driver).up(),
        (e: unknown) => e instanceof AdoptionRequiredError && /apsup migrate adopt topic-memory-pr1490/.test(e.message),
      );
      await assert.rejects(new Migrator(driver).pendingSql(), AdoptionRequiredError);
      const plan = await adoptTopicMemoryPr1490(context({ dryRun: true }));
      assert.equal(plan.outcome, 'planned');
      assert.equal(await databaseFingerprint(fx), before, 'detection, preflight and the plan change nothing');
      const text = plan.plan ?? '';
      const setAside = adoptionFile(fx.backend === 'sqlite' ? 'sqlite' : 'oceanbase', 'topic_memory_pr1490.set_aside.sql');
      for (const statement of splitSqlStatements(setAside)) assert.ok(text.includes(statement.replace(/^(--[^\n]*\n)+/, '').trim()), 'step 1 is printed');
      assert.match(text, /step 2: migration 0001_supervisor_schema/);
      assert.match(text, backend === 'mysql' ? /CALL pc_aps_adopt_topic_memory_pr1490\('topic-memory\.sources'\)/ : /:binding_name = 'topic-memory\.sources'/);
      assert.match(text, /step 5: retire/);
      assert.match(text, /DROP TABLE pc_artifact_processing_auto_wave_targets/);
    });

    test('an adoption interrupted after its set-aside step resumes; plain up refuses meanwhile', async () => {
      const data = await legacy({ waveInProgress: false, bulk: 10 });
      const text = adoptionFile(fx.backend === 'sqlite' ? 'sqlite' : 'oceanbase', 'topic_memory_pr1490.set_aside.sql');
      await driver.execute(fx.backend === 'sqlite' ? [{ sql: text }] : splitSqlStatements(text).map((sql) => ({ sql })));
      assert.equal(await topicMemoryPr1490Phase(driver), 'set_aside');
      await assert.rejects(new Migrator(driver).up(), (e: unknown) => e instanceof AdoptionRequiredError && /interrupted/.test(e.message));
      const r = await adoptTopicMemoryPr1490(context());
      assert.equal(r.outcome, 'adopted', JSON.stringify(r));
      assert.equal(Number(r.conversion?.intent_keys), expectedIntents(data).size);
    });

    test('data that turns inconsistent after the set-aside step: the conversion rolls back, the report names it, a corrected run resumes', async () => {
      await legacy({ waveInProgress: true, bulk: 10 });
      const text = adoptionFile(fx.backend === 'sqlite' ? 'sqlite' : 'oceanbase', 'topic_memory_pr1490.set_aside.sql');
      await driver.execute(fx.backend === 'sqlite' ? [{ sql: text }] : splitSqlStatements(text).map((sql) => ({ sql })));
      await fx.query('UPDATE pc_artifact_processing_pending SET flushed_generation = flush_generation + 5 WHERE scope_id = ?', ['tm-flush-open']);
      const r = await adoptTopicMemoryPr1490(context());
      assert.equal(r.outcome, 'refused', JSON.stringify(r));
      assert.deepEqual(
        r.problems.map((p) => p.problem),
        ['adoption_inconsistent'],
      );
      assert.equal(await topicMemoryPr1490Phase(driver), 'set_aside');
      assert.deepEqual(await fx.query('SELECT scope_id FROM pc_artifact_processing_intents'), [], 'nothing was converted');
      await fx.query('UPDATE pc_artifact_processing_pending SET flushed_generation = flush_generation - 1 WHERE scope_id = ?', ['tm-flush-open']);
      assert.equal((await adoptTopicMemoryPr1490(context())).outcome, 'adopted');
    });

    test('--keep-legacy keeps the old tables after the checked conversion; the conversion never runs twice; a later run retires', async () => {
      await legacy({ waveInProgress: true });
      const r = await adoptTopicMemoryPr1490(context({ keepLegacy: true }));
      assert.equal(r.outcome, 'adopted', JSON.stringify(r));
      assert.equal(await driver.tableExists('pc_aps_pr1490_binding_states'), true);
      assert.equal(await driver.tableExists('pc_artifact_processing_auto_wave_targets'), true);
      assert.equal(await topicMemoryPr1490Phase(driver), 'converted');
      const store = openStore(fx.target) as BaseStore;
      try {
        if (backend === 'mysql') {
          const { procedureInstall } = await import('../../src/migrations/plan.ts');
          await driver.execute(procedureInstall('pc_aps_adopt_topic_memory_pr1490', 'test'));
        }
        const intents = await rowsOf(fx, 'pc_artifact_processing_intents');
        await assert.rejects(
          store.callOperation('pc_aps_adopt_topic_memory_pr1490', { binding_name: TOPIC_BINDING }),
          (e: unknown) => e instanceof StoreError && e.code === 'adoption_done',
        );
        assert.deepEqual(await rowsOf(fx, 'pc_artifact_processing_intents'), intents, 'the refused second conversion rolled back');
      } finally {
        await store.close();
      }
      const again = await adoptTopicMemoryPr1490(context());
      assert.equal(again.outcome, 'adopted');
      assert.equal(await driver.tableExists('pc_aps_pr1490_binding_states'), false);
      assert.equal(await topicMemoryPr1490Phase(driver), 'retired');
    });

    test('the runtime then recovers every converted duty: flushes confirmed, wave targets run, uncovered source consumed in order without gaps', async () => {
      const data = await legacy({ waveInProgress: true, bulk: 12 });
      assert.equal((await adoptTopicMemoryPr1490(context())).outcome, 'adopted');
      await fx.query(
        fx.backend === 'sqlite'
          ? 'CREATE TABLE fx_pr1490_windows (id INTEGER PRIMARY KEY AUTOINCREMENT, scope_id TEXT NOT NULL, from_position INTEGER NOT NULL, through_position INTEGER NOT NULL)'
          : 'CREATE TABLE fx_pr1490_windows (id BIGINT AUTO_INCREMENT PRIMARY KEY, scope_id VARCHAR(191) NOT NULL, from_position BIGINT NOT NULL, through_position BIGINT NOT NULL)',
      );
      const runtime = await startRuntime(fx, [legacyTopicMemory], { env: { [`${P}TOPIC_MEMORY_SCHEDULE_SECONDS`]: '1' } });
      try {
        await waitFor(
          async () => {
            const open = await fx.query(
              'SELECT COUNT(*) AS n FROM pc_artifact_processing_intents WHERE binding_name = ? AND (requested_generation > handled_generation OR dirty_generation > clean_generation)',
              [TOPIC_BINDING],
            );
            return Number(open[0].n) === 0;
          },
          30_000,
          100,
        );
      } finally {
        await runtime.stop();
      }
      const cursors = new Map(
        (await fx.query('SELECT scope_id, source_cursor FROM pc_artifact_processing_source_cursors')).map((r) => [String(r.scope_id), Number(r.source_cursor)]),
      );
      const pending = await fx.query('SELECT scope_id, source_through, flush_generation, flushed_generation FROM pc_artifact_processing_pending');
      for (const p of pending) {
        assert.equal(cursors.get(String(p.scope_id)), Number(p.source_through), `${String(p.scope_id)}: every announced source position is consumed`);
        assert.equal(Number(p.flushed_generation), Number(p.flush_generation), `${String(p.scope_id)}: the unconfirmed flush was honoured`);
      }
      const windows = await fx.query('SELECT scope_id, from_position, through_position FROM fx_pr1490_windows ORDER BY id');
      for (const s of data.scopes) {
        const mine = windows.filter((w) => w.scope_id === s.scopeId).map((w) => [Number(w.from_position), Number(w.through_position)]);
        let next = (s.cursor ?? 0) + 1;
        for (const [from, through] of mine) {
          assert.equal(from, next, `${s.scopeId}: windows are contiguous from the old cursor (no source skipped or repeated)`);
          assert.ok(through - from < WINDOW);
          next = through + 1;
        }
        assert.equal(next - 1, Math.max(s.cursor ?? 0, s.sourceThrough), `${s.scopeId}: consumed through its source`);
      }
      const waveRunning = await fx.store.readIntent(TOPIC_BINDING, 'tm-wave-running');
      assert.equal(waveRunning?.handledGeneration, 1, 'the running wave target was invoked again (its recovery duty)');
    });

    test('an unexpired check interval keeps its remaining wait after the adoption: requests run, ordinary work waits for the check', async () => {
      const data = await legacy({ waveInProgress: false });
      assert.equal((await adoptTopicMemoryPr1490(context())).outcome, 'adopted');
      await fx.query(
        fx.backend === 'sqlite'
          ? 'CREATE TABLE fx_pr1490_windows (id INTEGER PRIMARY KEY AUTOINCREMENT, scope_id TEXT NOT NULL, from_position INTEGER NOT NULL, through_position INTEGER NOT NULL)'
          : 'CREATE TABLE fx_pr1490_windows (id BIGINT AUTO_INCREMENT PRIMARY KEY, scope_id VARCHAR(191) NOT NULL, from_position BIGINT NOT NULL, through_position BIGINT NOT NULL)',
      );
      // The last wave completed two minutes ago; the interval is five minutes.
      // The deployment's interval key, set explicitly (unset is the legacy "off", RFC 11).
      const runtime = await startRuntime(fx, [legacyTopicMemory], { env: { [`${P}TOPIC_MEMORY_SCHEDULE_SECONDS`]: '300' } });
      try {
        await waitFor(
          async () => {
            const a = await fx.store.readIntent(TOPIC_BINDING, 'tm-flush-open');
            const b = await fx.store.readIntent(TOPIC_BINDING, 'tm-flush-uncovered');
            return a?.handledGeneration === 1 && b?.handledGeneration === 1;
          },
          20_000,
          100,
        );
        // The runtime read the schedule: its next check is the old completion + the interval,
        // about three minutes from now, so nothing automatic can start before it (the verdict is
        // the due time the runtime holds, not a quiet window).
        const due = (await waitFor(
          async () => runtime.status().families.find((f) => f.bindingName === TOPIC_BINDING)?.nextDueAt ?? null,
          20_000,
          20,
        )) as string;
        const ahead = Date.parse(due) - Date.now();
        assert.ok(ahead > 150_000 && ahead <= 180_000, `next check due in ${ahead} ms, expected the remaining wait of about 180 s`);
      } finally {
        await runtime.stop();
      }
      const uncovered = await fx.store.readIntent(TOPIC_BINDING, 'tm-uncovered');
      assert.deepEqual(
        [uncovered?.dirtyGeneration, uncovered?.cleanGeneration, uncovered?.requestedGeneration],
        [1, 0, 0],
        'ordinary work waits for the next check, due at the old completion time + interval',
      );
      const state = await fx.store.readBindingState(TOPIC_BINDING);
      assert.equal(state.scanGeneration, 0, 'no automatic scan ran before the remaining wait was over');
    });
  });

  describe(`[${backend}] apsup migrate sql|up|adopt on a PR #1490 database (CLI)`, () => {
    let fx: BackendFixture;
    let dir: string;

    beforeEach(async () => {
      fx = await createBackend(backend, { migrate: false });
      dir = makeFixtureDir(`adopt-${backend}`);
    });

    afterEach(async () => {
      killEverything();
      await fx?.cleanup();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    test('up exits 4 naming the adopt command; sql prints the plan; adopt --dry-run changes nothing; adopt converts; status is clean', async () => {
      await createPr1490Database(fx, pr1490Data({ waveInProgress: true, bulk: 5 }));
      const cli = (args: string[]) => runCli([...args, '--families', FAMILIES_MODULE_PATH], fx.url, dir, {}, 60_000);
      const before = await databaseFingerprint(fx);
      const up = await cli(['migrate', 'up']);
      assert.equal(up.code, 4, up.stderr);
      assert.match(up.stderr, /apsup migrate adopt topic-memory-pr1490/);
      const sql = await cli(['migrate', 'sql']);
      assert.equal(sql.code, 0, sql.stderr);
      assert.match(sql.stdout, /step 1: set aside/);
      assert.match(sql.stdout, /step 3: conversion pc_aps_adopt_topic_memory_pr1490/);
      const dry = await cli(['migrate', 'adopt', 'topic-memory-pr1490', '--dry-run']);
      assert.equal(dry.code, 0, dry.stderr);
      assert.match(dry.stdout, /adoption topic-memory-pr1490: planned/);
      assert.equal(await databaseFingerprint(fx), before, 'up, sql and a dry run changed nothing');
      const adopt = await cli(['migrate', 'adopt', 'topic-memory-pr1490', '--json']);
      assert.equal(adopt.code, 0, adopt.stderr);
      const result = JSON.parse(adopt.stdout) as AdoptionResult;
      assert.equal(result.outcome, 'adopted');
      assert.match(String(result.conversion?.summary), /accepted requests/);
      const status = await cli(['migrate', 'status']);
      assert.equal(status.code, 0, status.stdout + status.stderr);
      assert.match(status.stdout, /up to date/);
      assert.match(status.stdout, /retired\s+topic_memory_pr1490 .*binding topic-memory\.sources: \d+ keys/, 'status lists the adoption');
      const unknown = await cli(['migrate', 'adopt', 'nothing-such']);
      assert.equal(unknown.code, 2);
    });

    test('adopt refuses inconsistent data with exit 4 and a report', async () => {
      await createPr1490Database(fx, pr1490Data({ waveInProgress: false }));
      await fx.query('UPDATE pc_artifact_processing_pending SET flushed_generation = flush_generation + 1 WHERE scope_id = ?', ['tm-flush-open']);
      const before = await databaseFingerprint(fx);
      const out = await runCli(['migrate', 'adopt', 'topic-memory-pr1490', '--families', FAMILIES_MODULE_PATH], fx.url, dir, {}, 60_000);
      assert.equal(out.code, 4, out.stderr);
      assert.match(out.stdout, /flush_confirmed_beyond_request: topic-memory\.sources \/ tm-flush-open/);
      assert.match(out.stdout, /nothing was changed/);
      assert.equal(await databaseFingerprint(fx), before);
    });
  });
}
