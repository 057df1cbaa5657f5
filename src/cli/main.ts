#!/usr/bin/env node
/**
 * apsup: the Artifact Processing Supervisor CLI (commands.ts lists them; `apsup --help`).
 * Both entry points (bin/apsup.mjs, src/cli/main.ts) run `cli`, which turns every failure into
 * one line and a documented exit code (errors.ts).
 */
import { publishOnce } from '../notify/start.ts';
import { parseArgs } from 'node:util';
import { buildRuntimeConfig } from '../config/load.ts';
import { redactDatabaseUrl } from '../config/database-url.ts';
import { readSettings } from '../config/settings.ts';
import { openMigrationDriver } from '../migrations/drivers.ts';
import { Migrator } from '../migrations/migrator.ts';
import { createLogger } from '../logging.ts';
import { StoreError } from '../store/errors.ts';
import { openStore } from '../store/open.ts';
import { COMMANDS, commandHelp, generalUsage } from './commands.ts';
import { demoEnv, seedDemo } from './demo.ts';
import { CliRefusal, EXIT, UsageError, reportFailure, verboseRequested } from './errors.ts';
import { maintenanceCommand } from './maintenance.ts';
import { migrateCommand } from './migrate.ts';
import { modeSwitchCommand } from './mode-switch.ts';
import { runUntilSignal } from './run.ts';
import { statusCommand } from './status.ts';
import { TASKS_STRING_OPTIONS, tasksCommand } from './tasks.ts';
import { joinNegativeValues } from './tasks-input.ts';

/** Arguments after the command: [min, max] per command (and action). */
function expectArguments(command: string, rest: string[]): void {
  const [action] = rest;
  const counts: Record<string, [number, number, string]> = {
    run: [0, 0, ''],
    start: [0, 0, ''],
    status: [0, 0, ''],
    console: [0, 0, ''],
    'mode-switch': [0, 0, ''],
    trigger: [2, 2, '<family> <scope>'],
    'mark-dirty': [2, 2, '<family> <scope>'],
    maintenance: [1, 1, 'on|off|status'],
    db: [1, 1, 'accounts'],
    migrate: action === 'adopt' ? [2, 2, 'adopt <source>'] : [1, 1, 'up|down|status|sql'],
  };
  if (command === 'tasks') {
    const withArg = ['submit', 'show', 'cancel', 'delete', 'resume', 'set-capacity'];
    const n = action !== undefined && withArg.includes(action) ? 2 : 1;
    if (rest.length > n && action !== undefined) throw new UsageError(`tasks ${action}: unexpected argument ${JSON.stringify(rest[n])} (apsup tasks --help)`);
    return;
  }
  const [min, max, shape] = counts[command]!;
  if (rest.length > max)
    throw new UsageError(`${command}: unexpected argument ${JSON.stringify(rest[max])}${shape ? ` (usage: apsup ${command} ${shape})` : ''}`);
  if (rest.length < min && command !== 'migrate' && command !== 'maintenance') throw new UsageError(`${command} needs ${shape} (apsup ${command} --help)`);
}

async function start(): Promise<number> {
  const logger = createLogger();
  const target = readSettings(demoEnv(process.env)).DATABASE_URL;
  logger.info({ database: redactDatabaseUrl(target) }, 'apsup start: migrating the database');
  const driver = await openMigrationDriver(target);
  try {
    const migrator = new Migrator(driver);
    const applied = await migrator.up({ demo: true }); // the reference families need their demo tables
    const status = await migrator.status();
    logger.info({ applied, migrations: status.migrations.length, pending: status.pending, drift: status.drift }, 'schema up to date');
  } finally {
    await driver.close();
  }
  let demo: NodeJS.Timeout | null = null;
  const code = await runUntilSignal({ logger, demo: true, command: 'start', env: demoEnv(process.env), schemaChecked: true }, async (runtime) => {
    demo = await seedDemo(runtime, logger);
    logger.info('running the reference families on the embedded database; Ctrl-C stops cleanly');
  });
  if (demo) clearInterval(demo);
  return code;
}

async function intent(kind: 'trigger' | 'mark-dirty', family: string, scope: string, familiesModule?: string): Promise<number> {
  if (family.trim() === '') throw new UsageError(`${kind}: the family must not be empty`);
  if (scope.trim() === '') throw new UsageError(`${kind}: the scope id must not be empty or blank (got ${JSON.stringify(scope)})`);
  const { config } = await buildRuntimeConfig({ familiesModule, command: kind });
  const f = config.families.find((x) => x.registration.family === family);
  if (!f) throw new UsageError(`unknown family ${JSON.stringify(family)} (registered: ${config.families.map((x) => x.registration.family).join(', ')})`);
  const store = openStore(config.database);
  try {
    const result = kind === 'trigger' ? await store.acceptRequest(f.registration.bindingName, scope) : await store.markDirty(f.registration.bindingName, scope);
    console.log(JSON.stringify({ status: 'accepted', family, ...result }));
    // After the commit: wake the background leader at once when a wake-up channel is configured.
    await publishOnce(
      process.env,
      config.database,
      createLogger({ level: 'silent' }),
      kind === 'trigger' ? 'request' : 'dirty',
      kind === 'trigger' ? `${family}\t${result.pendingSequence}` : family,
    ).catch(() => undefined);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof StoreError && error.code === 'maintenance') {
      throw new CliRefusal(`${kind} refused: the deployment is in maintenance (apsup maintenance status); nothing was written`, EXIT.usage);
    }
    throw error;
  } finally {
    await store.close();
  }
}

/** Parses and runs one command; throws on any failure (cli reports it). */
export async function main(argv: string[]): Promise<number> {
  const command = argv[0];
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    if (command === undefined) {
      console.error(generalUsage());
      return EXIT.usage;
    }
    console.log(generalUsage());
    return EXIT.ok;
  }
  const spec = COMMANDS[command];
  if (!spec) throw new UsageError(`unknown command ${JSON.stringify(command)} (apsup --help lists the commands)`);
  const options = Object.fromEntries(Object.entries(spec.options).map(([name, o]) => [name, { type: o.type, ...(o.short ? { short: o.short } : {}) }]));
  const rest = argv.slice(1);
  const { positionals, values } = parseArgs({
    // `apsup tasks list --limit -1` reaches validation (one line, exit 2), not a parser ambiguity.
    args: command === 'tasks' ? joinNegativeValues(rest, new Set(TASKS_STRING_OPTIONS)) : rest,
    allowPositionals: true,
    options: { ...options, help: { type: 'boolean', short: 'h' }, verbose: { type: 'boolean' } },
    strict: true,
  });
  if (values.help) {
    console.log(commandHelp(command));
    return EXIT.ok;
  }
  expectArguments(command, positionals);
  const v = values as Record<string, string | boolean | undefined>;
  const str = (name: string) => v[name] as string | undefined;
  const bool = (name: string) => v[name] === true;
  switch (command) {
    case 'run':
      return runUntilSignal({ familiesModule: str('families'), role: str('role') });
    case 'tasks':
      return tasksCommand({
        positionals,
        payload: str('payload'),
        payloadFile: str('payload-file'),
        dedupeKey: str('dedupe-key'),
        timeoutSeconds: str('timeout-seconds'),
        handlerVersion: str('handler-version'),
        state: str('state'),
        before: str('before'),
        limit: str('limit'),
        olderThanDays: str('older-than-days'),
        json: bool('json'),
      });
    case 'trigger':
    case 'mark-dirty':
      return intent(command, positionals[0]!, positionals[1]!, str('families'));
    case 'mode-switch':
      return modeSwitchCommand({ to: str('to'), familiesModule: str('families'), json: bool('json') });
    case 'maintenance':
      return maintenanceCommand(positionals[0], { json: bool('json') });
    case 'status':
      return statusCommand({ familiesModule: str('families'), json: bool('json') });
    case 'db':
      return (await import('./db-accounts.ts')).dbAccountsCommand(positionals[0], { check: bool('check'), json: bool('json') });
    case 'console': {
      // Imported here: the HTTP framework is for the console, not for every command.
      const { consoleCommand } = await import('../console/command.ts');
      return consoleCommand({ familiesModule: str('families'), listen: str('listen') });
    }
    case 'migrate':
      return migrateCommand(positionals[0], {
        json: bool('json'),
        familiesModule: str('families'),
        source: positionals[1],
        dryRun: bool('dry-run'),
        keepLegacy: bool('keep-legacy'),
        jobId: str('job-id'),
        withDemo: bool('with-demo'),
        yes: bool('yes'),
      });
    default:
      return start();
  }
}

/** The entry point of both bin/apsup.mjs and `node src/cli/main.ts`: never a bare stack trace. */
export async function cli(argv: string[]): Promise<number> {
  try {
    return await main(argv);
  } catch (error) {
    return reportFailure(error, verboseRequested(argv));
  }
}

const invokedDirectly = process.argv[1] && /(?:^|[\\/])main\.ts$/.test(process.argv[1]);
if (invokedDirectly) {
  void cli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
