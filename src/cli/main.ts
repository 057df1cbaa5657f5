#!/usr/bin/env node
/**
 * apsup: the Artifact Processing Supervisor CLI.
 *   apsup migrate up|down|status|sql [--json]   schema of POWERCONTEXT_SERVER_RUNTIME_DATABASE_URL
 *   apsup start                                 migrate the database and report the schema status
 */
import { parseArgs } from 'node:util';
import { ConfigError, DATABASE_URL_VARIABLE, parseDatabaseUrl, redactDatabaseUrl } from '../config/database-url.ts';
import { openMigrationDriver, type MigrationDriver } from '../migrations/drivers.ts';
import { MigrationDriftError, Migrator, formatStatus } from '../migrations/migrator.ts';
import { createLogger } from '../logging.ts';
import { openStore } from '../store/open.ts';
import { buildRuntimeConfig, runUntilSignal } from './run.ts';
import { demoEnv, seedDemo } from './demo.ts';
import { TASKS_STRING_OPTIONS, TASKS_USAGE, tasksCommand } from './tasks.ts';
import { joinNegativeValues } from './tasks-input.ts';
import { modeSwitchCommand } from './mode-switch.ts';
import { statusCommand } from './status.ts';
import { adoptCommand, adoptionPlanFor } from './adopt.ts';
import { maintenanceCommand } from './maintenance.ts';
import { StoreError } from '../store/errors.ts';
import { publishOnce } from '../notify/start.ts';
import { AdoptionRequiredError } from '../migrations/adoption-detect.ts';
import { RegistrationError } from '../registry/registration.ts';

const USAGE = `usage:
  apsup migrate up [--with-demo]
                         apply pending migrations (and install stored procedures on MySQL/OceanBase);
                         --with-demo also creates the reference families' demo tables (ref_*)
  apsup migrate down     revert the last applied migration
  apsup migrate status   list migrations and procedure checksums [--json]; exit 3 on drift
  apsup migrate sql      print exactly what 'migrate up' would run, for review (on a Topic
                         Memory PR #1490 database: the adoption plan)
  apsup migrate adopt topic-memory-pr1490|profile-apscheduler [--dry-run] [--keep-legacy]
                         [--job-id <id>] [--families <module>] [--json]
                         convert a replaced scheduler's state in a maintenance window;
                         exit 4 when refused with a report (nothing changed)
  apsup run --families <module> [--role all|api|background]
                         run the supervisors until SIGINT/SIGTERM (the families module, or
                         POWERCONTEXT_SERVER_RUNTIME_FAMILIES_MODULE, is required)
  apsup trigger <family> <scope>      accept an explicit request (requested generation + 1)
  apsup mark-dirty <family> <scope>   mark ordinary work (dirty generation + 1)
  apsup mode-switch --to global|dedicated [--json]
                         switch the supervisor mode after every host of the old mode stopped:
                         invalidates the old mode's terms and records the new mode
  apsup maintenance on|off|status [--json]
                         maintenance window: while on, dirty marks, explicit triggers and
                         runtime starts are refused (mode-switch ends it)
  apsup status --families <module> [--json]
                         recorded mode, supervisor terms and per-family schedule and backlog
  apsup start            migrate, seed a small demo workload and run the reference families
${TASKS_USAGE.split('\n').slice(1).join('\n')}

database: ${DATABASE_URL_VARIABLE}=sqlite:<path> | mysql://user:pass@host:port/db | oceanbase://...
          (default sqlite:./var/powercontext.sqlite)`;

async function withMigrator<T>(fn: (migrator: Migrator, driver: MigrationDriver) => Promise<T>): Promise<T> {
  const target = parseDatabaseUrl(process.env[DATABASE_URL_VARIABLE]);
  const driver = await openMigrationDriver(target);
  try {
    return await fn(new Migrator(driver), driver);
  } finally {
    await driver.close();
  }
}

interface MigrateOptions {
  json: boolean;
  familiesModule?: string;
  source?: string;
  dryRun?: boolean;
  keepLegacy?: boolean;
  jobId?: string;
  withDemo?: boolean;
}

/** `apsup migrate ...`: a refusal for drift (MigrationDriftError) exits 3 from either entry point. */
async function migrate(action: string | undefined, options: MigrateOptions): Promise<number> {
  try {
    return await migrateAction(action, options);
  } catch (error) {
    if (!(error instanceof MigrationDriftError)) throw error;
    console.error(`apsup: ${error.message}`);
    return 3;
  }
}

async function migrateAction(action: string | undefined, options: MigrateOptions): Promise<number> {
  const json = options.json;
  switch (action) {
    case 'up':
      return withMigrator(async (m) => {
        const applied = await m.up({ demo: options.withDemo });
        console.log(applied.length === 0 ? 'nothing to apply' : `applied: ${applied.join(', ')}`);
        if (options.withDemo) console.log('demo tables: installed');
        return 0;
      });
    case 'down':
      return withMigrator(async (m) => {
        const reverted = await m.down();
        console.log(reverted.length === 0 ? 'nothing to revert' : `reverted: ${reverted.join(', ')}`);
        return 0;
      });
    case 'status':
      return withMigrator(async (m) => {
        const status = await m.status();
        console.log(json ? JSON.stringify(status, null, 2) : formatStatus(status));
        return status.drift ? 3 : 0;
      });
    case 'sql':
      return withMigrator(async (m, driver) => {
        try {
          process.stdout.write(await m.pendingSql());
        } catch (error) {
          if (!(error instanceof AdoptionRequiredError)) throw error;
          process.stdout.write(`-- ${error.message}\n${await adoptionPlanFor(driver, { familiesModule: options.familiesModule })}`);
        }
        return 0;
      });
    case 'adopt':
      return adoptCommand({
        source: options.source,
        familiesModule: options.familiesModule,
        dryRun: options.dryRun,
        keepLegacy: options.keepLegacy,
        jobId: options.jobId,
        json,
      });
    default:
      console.error(USAGE);
      return 2;
  }
}

async function start(): Promise<number> {
  const target = parseDatabaseUrl(process.env[DATABASE_URL_VARIABLE]);
  console.log(`database: ${redactDatabaseUrl(target)}`);
  await withMigrator(async (m) => {
    const applied = await m.up({ demo: true }); // the reference families need their demo tables
    if (applied.length > 0) console.log(`applied: ${applied.join(', ')}`);
    console.log(formatStatus(await m.status()));
  });
  const logger = createLogger();
  let demo: NodeJS.Timeout | null = null;
  const code = await runUntilSignal({ logger, demo: true, command: 'start', env: demoEnv(process.env) }, async (runtime) => {
    demo = await seedDemo(runtime, logger);
    console.error('apsup: running the reference families on the embedded database; Ctrl-C stops cleanly');
  });
  if (demo) clearInterval(demo);
  return code;
}

async function intent(kind: 'trigger' | 'mark-dirty', family: string | undefined, scope: string | undefined, familiesModule?: string): Promise<number> {
  if (!family || !scope) {
    console.error(USAGE);
    return 2;
  }
  const { config } = await buildRuntimeConfig({ familiesModule, role: undefined, command: kind });
  const f = config.families.find((x) => x.registration.family === family);
  if (!f) {
    console.error(`apsup: unknown family ${JSON.stringify(family)} (registered: ${config.families.map((x) => x.registration.family).join(', ')})`);
    return 2;
  }
  const store = openStore(config.database);
  try {
    const result = kind === 'trigger'
      ? await store.acceptRequest(f.registration.bindingName, scope)
      : await store.markDirty(f.registration.bindingName, scope);
    console.log(JSON.stringify({ status: 'accepted', family, ...result }));
    // After the commit: wake the background leader at once when a wake-up channel is configured.
    await publishOnce(process.env, config.database, createLogger({ level: 'silent' }), kind === 'trigger' ? 'request' : 'dirty',
      kind === 'trigger' ? `${family}\t${result.pendingSequence}` : family).catch(() => undefined);
    return 0;
  } catch (error) {
    if (error instanceof StoreError && error.code === 'maintenance') {
      console.error(`apsup: ${kind} refused: the deployment is in maintenance (apsup maintenance status); nothing was written`);
      return 2;
    }
    throw error;
  } finally {
    await store.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    // `apsup tasks list --limit -1` reaches validation (one line, exit 2), not a parser ambiguity.
    args: argv[0] === 'tasks' ? joinNegativeValues(argv, new Set(TASKS_STRING_OPTIONS)) : argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      role: { type: 'string' },
      families: { type: 'string' },
      payload: { type: 'string' },
      'payload-file': { type: 'string' },
      'dedupe-key': { type: 'string' },
      'timeout-seconds': { type: 'string' },
      'handler-version': { type: 'string' },
      state: { type: 'string' },
      before: { type: 'string' },
      limit: { type: 'string' },
      'older-than-days': { type: 'string' },
      to: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      'keep-legacy': { type: 'boolean', default: false },
      'job-id': { type: 'string' },
      'with-demo': { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const [command, action, extra] = positionals;
  switch (command) {
    case 'run':
      return runUntilSignal({ familiesModule: values.families, role: values.role });
    case 'tasks':
      return tasksCommand({
        positionals: positionals.slice(1),
        payload: values.payload,
        payloadFile: values['payload-file'],
        dedupeKey: values['dedupe-key'],
        timeoutSeconds: values['timeout-seconds'],
        handlerVersion: values['handler-version'],
        state: values.state,
        before: values.before,
        limit: values.limit,
        olderThanDays: values['older-than-days'],
        json: values.json,
      });
    case 'trigger':
    case 'mark-dirty':
      return intent(command, action, extra, values.families);
    case 'mode-switch':
      return modeSwitchCommand({ to: values.to, familiesModule: values.families, json: values.json });
    case 'maintenance':
      return maintenanceCommand(action, { json: values.json });
    case 'status':
      return statusCommand({ familiesModule: values.families, json: values.json });
    case 'migrate':
      return migrate(action, {
        json: values.json ?? false,
        familiesModule: values.families,
        source: extra,
        dryRun: values['dry-run'],
        keepLegacy: values['keep-legacy'],
        jobId: values['job-id'],
        withDemo: values['with-demo'],
      });
    case 'start':
      return start();
    default:
      console.error(USAGE);
      return 2;
  }
}

const invokedDirectly = process.argv[1] && /(?:^|[\\/])main\.ts$/.test(process.argv[1]);
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => { process.exitCode = code; },
    (error: unknown) => {
      if (error instanceof ConfigError || error instanceof RegistrationError || error instanceof MigrationDriftError || error instanceof AdoptionRequiredError) {
        console.error(`apsup: ${error.message}`);
        process.exitCode = error instanceof MigrationDriftError ? 3 : error instanceof AdoptionRequiredError ? 4 : 2;
      } else {
        console.error(`apsup: ${(error as Error)?.message ?? String(error)}`);
        // An unknown option or a missing option value is a usage error, like the commands' own.
        process.exitCode = String((error as { code?: unknown })?.code ?? '').startsWith('ERR_PARSE_ARGS') ? 2 : 1;
      }
    },
  );
}
