/**
 * Detection of a database that holds the Topic Memory PR #1490 scheduler tables and has not been
 * adopted (RFC 11): plain `apsup migrate up` must not run on it (its first migration would
 * collide with the deployed binding states and lease); `apsup migrate adopt topic-memory-pr1490`
 * converts it in a maintenance window. Also detects an adoption interrupted after its set-aside
 * step, which only the adopt command may resume.
 */
import type { MigrationDriver } from './drivers.ts';

export type BaselinePhase = 'none' | 'baseline' | 'set_aside' | 'converted' | 'retired';

export const TOPIC_MEMORY_PR1490 = 'topic-memory-pr1490';
export const TOPIC_MEMORY_PR1490_LEDGER_NAME = 'topic_memory_pr1490';

export class AdoptionRequiredError extends Error {
  constructor(readonly phase: BaselinePhase) {
    super(
      phase === 'baseline'
        ? 'this database holds the Topic Memory PR #1490 scheduler tables (pc_artifact_processing_pending, binding states with last_auto_wave_completed_at) and has not been adopted: ' +
            `stop every PR #1490 supervisor, then run \`apsup migrate adopt ${TOPIC_MEMORY_PR1490}\` in a maintenance window (\`--dry-run\` prints the plan)`
        : `an adoption of the Topic Memory PR #1490 tables was interrupted after its set-aside step: resume it with \`apsup migrate adopt ${TOPIC_MEMORY_PR1490}\``,
    );
    this.name = 'AdoptionRequiredError';
  }
}

/** Where a database stands with respect to the PR #1490 adoption. */
export async function topicMemoryPr1490Phase(driver: MigrationDriver): Promise<BaselinePhase> {
  if (await driver.tableExists('pc_aps_adoptions')) {
    const rows = await driver.read('SELECT state FROM pc_aps_adoptions WHERE adoption = :adoption', { adoption: TOPIC_MEMORY_PR1490_LEDGER_NAME });
    if (rows.length > 0) return rows[0].state === 'retired' ? 'retired' : 'converted';
  }
  if (await driver.tableExists('pc_aps_pr1490_binding_states')) return 'set_aside';
  if ((await driver.tableExists('pc_artifact_processing_pending')) && !(await driver.tableExists('pc_artifact_processing_intents'))) return 'baseline';
  return 'none';
}

/** The phase when it requires the adopt command before anything else may migrate, else null. */
export async function detectUnadoptedBaseline(driver: MigrationDriver): Promise<BaselinePhase | null> {
  const phase = await topicMemoryPr1490Phase(driver);
  return phase === 'baseline' || phase === 'set_aside' ? phase : null;
}
