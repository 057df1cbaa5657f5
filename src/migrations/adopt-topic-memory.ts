/**
 * Adoption of the Topic Memory PR #1490 scheduler (topic-memory-pr1490, adoption.ts): preflight,
 * set-aside, migrations, conversion, retirement; an interrupted run resumes from its phase.
 */
import {
  adoptionFile,
  calibrate,
  callConversion,
  conversionPlan,
  result,
  runPreflight,
  statementsOf,
  type AdoptionContext,
  type AdoptionResult,
} from './adoption-common.ts';
import { StoreError } from '../store/errors.ts';
import type { OperationName } from '../store/operations.ts';
import type { MigrationBackend, PlannedStatement } from './catalog.ts';
import { procedureInstall, procedureRemoval, renderPlan } from './plan.ts';
import { TOPIC_MEMORY_PR1490, TOPIC_MEMORY_PR1490_LEDGER_NAME, topicMemoryPr1490Phase } from './adoption-detect.ts';

/** The migration after which the conversion was written (it needs the adoption ledger). */
const CONVERSION_AFTER: Record<MigrationBackend, string> = { sqlite: '0006_adoptions', oceanbase: '0009_adoptions' };

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
