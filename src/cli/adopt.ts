/**
 * `apsup migrate adopt topic-memory-pr1490|profile-apscheduler [--dry-run] [--keep-legacy]
 * [--job-id <id>] [--families <module>] [--json]`: converts the state of a scheduler this runtime
 * replaces, in a maintenance window (src/migrations/adoption.ts). The family is found in the
 * families module (topic-memory, profile), whose binding name must be the deployed one.
 * Exit codes: 0 adopted, already adopted or planned; 4 refused with a report (nothing changed by
 * a refused preflight); 2 bad usage or configuration.
 */
import { ConfigError } from '../config/database-url.ts';
import { readSetting } from '../config/settings.ts';
import {
  ADOPTION_SOURCES,
  PROFILE_APSCHEDULER,
  adoptProfileApscheduler,
  adoptTopicMemoryPr1490,
  formatAdoption,
  topicMemoryPr1490Plan,
  type AdoptionContext,
  type AdoptionSource,
} from '../migrations/adoption.ts';
import { TOPIC_MEMORY_PR1490 } from '../migrations/adoption-detect.ts';
import { openMigrationDriver, type MigrationDriver } from '../migrations/drivers.ts';
import { Migrator } from '../migrations/migrator.ts';
import { HostLockError, acquireSqliteHostLock } from '../runtime/sqlite-host-lock.ts';
import { openStore, requireExistingDatabase } from '../store/open.ts';
import { buildRuntimeConfig } from '../config/load.ts';

export interface AdoptOptions {
  source: string | undefined;
  familiesModule?: string;
  dryRun?: boolean;
  keepLegacy?: boolean;
  jobId?: string;
  json?: boolean;
  env?: NodeJS.ProcessEnv;
}

const FAMILY_OF: Record<AdoptionSource, string> = { [TOPIC_MEMORY_PR1490]: 'topic-memory', [PROFILE_APSCHEDULER]: 'profile' };

/** The families module and options an adoption needs, checked before the database is opened. */
async function adoptionConfig(source: AdoptionSource, options: AdoptOptions) {
  const { config } = await buildRuntimeConfig({ familiesModule: options.familiesModule, env: options.env, command: 'migrate adopt' });
  const family = config.families.find((f) => f.registration.family === FAMILY_OF[source]);
  if (!family) {
    throw new ConfigError(
      `adopting ${source} needs a registered ${FAMILY_OF[source]} family (registered: ${config.families.map((f) => f.registration.family).join(', ') || 'none'})`,
    );
  }
  if (options.jobId !== undefined && !/^[A-Za-z0-9_.:-]{1,191}$/.test(options.jobId)) {
    throw new ConfigError(`--job-id must be 1-191 characters of letters, digits, '_', '.', ':' or '-', got ${JSON.stringify(options.jobId)}`);
  }
  return { config, family };
}

async function adoptionContext(
  source: AdoptionSource,
  options: AdoptOptions,
  driver: MigrationDriver,
  checked?: Awaited<ReturnType<typeof adoptionConfig>>,
): Promise<AdoptionContext> {
  const { config, family } = checked ?? (await adoptionConfig(source, options));
  return {
    driver,
    migrator: new Migrator(driver),
    openStore: () => openStore(config.database),
    registration: family.registration,
    schedule: family.schedule,
    dryRun: options.dryRun,
    keepLegacy: options.keepLegacy,
    jobId: options.jobId,
  };
}

export async function adoptCommand(options: AdoptOptions): Promise<number> {
  const source = options.source as AdoptionSource;
  if (!ADOPTION_SOURCES.includes(source)) {
    console.error(`apsup: migrate adopt needs one of ${ADOPTION_SOURCES.join(', ')}, got ${JSON.stringify(options.source ?? null)}`);
    return 2;
  }
  const target = readSetting('DATABASE_URL', options.env ?? process.env);
  const checked = await adoptionConfig(source, options);
  // A plan reads only: it never creates the database a mistyped path names.
  if (options.dryRun) requireExistingDatabase(target);
  let release: () => void = () => undefined;
  if (target.backend === 'sqlite' && !options.dryRun) {
    try {
      release = acquireSqliteHostLock(target.file);
    } catch (error) {
      if (error instanceof HostLockError) {
        console.error(`apsup: adoption refused: ${error.message}; stop it first`);
        return 2;
      }
      throw error;
    }
  }
  const driver = await openMigrationDriver(target);
  try {
    const ctx = await adoptionContext(source, options, driver, checked);
    const result = source === TOPIC_MEMORY_PR1490 ? await adoptTopicMemoryPr1490(ctx) : await adoptProfileApscheduler(ctx);
    if (options.json) console.log(JSON.stringify(result, null, 2));
    else {
      console.log(formatAdoption(result));
      if (result.plan) process.stdout.write(`\n${result.plan}`);
    }
    return result.outcome === 'refused' ? 4 : 0;
  } finally {
    await driver.close();
    release();
  }
}

/** `apsup migrate sql` on a database that must be adopted first: the adoption plan. */
export async function adoptionPlanFor(driver: MigrationDriver, options: { familiesModule?: string; env?: NodeJS.ProcessEnv }): Promise<string> {
  const ctx = await adoptionContext(TOPIC_MEMORY_PR1490, { source: TOPIC_MEMORY_PR1490, ...options }, driver);
  return topicMemoryPr1490Plan(ctx);
}
