/**
 * `apsup run`: validates configuration against the families module, migrates nothing, and runs
 * the supervisors until SIGINT/SIGTERM, then shuts down cleanly (discovery and dispatch stop,
 * workers are terminated within the grace period, the term is invalidated).
 */
import { buildRuntimeConfig, type ConfigOptions } from '../config/load.ts';
import { CandidateRegistration } from '../registry/candidates.ts';
import { checkProfileSidecar } from './profile-sidecar-guard.ts';
import { createLogger, prettyLogs, type Logger } from '../logging.ts';
import { Runtime } from '../runtime/runtime.ts';
import { acquireSqliteHostLock } from '../runtime/sqlite-host-lock.ts';
import type { BaseStore } from '../store/base-store.ts';
import { StoreError } from '../store/errors.ts';
import { openStore } from '../store/open.ts';
import { parseTaskConfig, type TaskConfig } from '../tasks/config.ts';
import { loadHostTaskRegistry } from '../child/host-import.ts';
import { TaskRunner } from '../tasks/task-runner.ts';
import { childDatabase } from '../runtime/child-database.ts';
import { hostAccounts, resolveSessionAccounts } from '../store/session-accounts.ts';
import { logFencing } from './fencing-report.ts';
import { TaskStore } from '../tasks/task-store.ts';
import { OBSERVABILITY_ADDRESS_VARIABLE, parseObservabilityAddress, type ObservabilityAddress } from '../observability/config.ts';
import type { ObservabilityServer } from '../observability/server.ts';
import type { ConsoleServer } from '../console/server.ts';
import { variableOf } from '../config/settings.ts';
import { parseNotifyConfig, type NotifyConfig } from '../notify/config.ts';
import { startNotify } from '../notify/start.ts';
import type { NotifyChannel } from '../notify/channel.ts';
import { CliRefusal, EXIT, describeFailure } from './errors.ts';
import { requireMigratedSchema } from './schema-check.ts';
import { ShutdownSignals } from './shutdown.ts';
import { killManagedChildren } from '../child/managed-child.ts';

const CONSOLE_ADDRESS_VARIABLE = variableOf('CONSOLE_ADDRESS');

export interface RunOptions extends ConfigOptions {
  logger?: Logger;
  /** Skip the schema check (the caller migrated the database just before: apsup start). */
  schemaChecked?: boolean;
}

export async function runUntilSignal(options: RunOptions, onStarted?: (runtime: Runtime) => Promise<void> | void): Promise<number> {
  const logger = options.logger ?? createLogger();
  let runtime: Runtime;
  let releaseLock: () => void = () => undefined;
  let taskConfig: TaskConfig;
  let observabilityAddress: ObservabilityAddress | null;
  let notifyConfig: NotifyConfig | null;
  let consoleSettings: { address: ObservabilityAddress | null; token: string | undefined };
  let mode = 'global';
  let candidate: CandidateRegistration | null = null;
  try {
    const { config, module, settings, env } = await buildRuntimeConfig(options);
    taskConfig = parseTaskConfig(env, settings);
    observabilityAddress = parseObservabilityAddress(env, settings);
    notifyConfig = settings.NOTIFY_REDIS_URL;
    consoleSettings = { address: settings.CONSOLE_ADDRESS, token: settings.CONSOLE_TOKEN };
    // A15: a variable nothing reads is most likely a typo of the closest known one (a warning: a
    // rolling upgrade may set a variable only the newer version reads).
    for (const u of config.unknownVariables)
      logger.warn({ variable: u.variable, closest: u.closest }, `unknown setting ${u.variable} is ignored (did you mean ${u.closest}?)`);
    // Nothing starts on a schema the code was not written for (pending migration, drifted procedure).
    if (!options.schemaChecked) {
      const check = await requireMigratedSchema(config.database, { command: options.command ?? 'run', allMigrations: true, drift: true });
      if (!check.checked) logger.warn({ reason: check.reason }, 'schema check incomplete');
    }
    if (config.database.backend === 'sqlite' && config.role !== 'api') releaseLock = acquireSqliteHostLock(config.database.file);
    mode = config.mode;
    // Which accounts the processors' sessions use, and what the database enforces (issue 40).
    const accounts = config.role === 'api' ? hostAccounts(config.database) : await resolveSessionAccounts(config.database, env);
    if (config.role !== 'api') logFencing(logger, accounts);
    runtime = new Runtime(config, logger, { accounts });
    logger.info({ familiesModule: module }, 'families module loaded');
    // The database records one mode (RFC 9): a start in the other mode is refused (every role);
    // only `apsup mode-switch` changes it.
    try {
      const claim = await runtime.store.claimRuntimeMode(config.mode);
      logger.info({ mode: claim.mode, outcome: claim.outcome }, 'runtime mode claimed');
      // RFC 11: the APScheduler sidecar must not run an adopted Profile job again.
      await checkProfileSidecar(runtime.store, config, logger);
      // RFC 8, 10: the same binding map and capabilities (and, background, the same execution
      // settings) as the live candidates of every supervisor key, or no start.
      candidate = new CandidateRegistration(runtime.store, config, logger);
      await candidate.register();
    } catch (error) {
      await runtime.store.close();
      throw error;
    }
  } catch (error) {
    releaseLock();
    let failure = error;
    if (error instanceof StoreError && (error.code === 'mode_mismatch' || error.code === 'maintenance')) {
      failure = new CliRefusal(
        error.code === 'mode_mismatch'
          ? `this database records supervisor mode ${mode === 'global' ? 'dedicated' : 'global'}; refusing to start in ${mode} mode (switch first: apsup mode-switch --to ${mode})`
          : 'the deployment is in maintenance (a mode switch or `apsup maintenance on`); not starting until it ends',
        EXIT.usage,
      );
    }
    // A refusal is logged for machines (JSON) and printed once as `apsup: ...` by the caller; in
    // human-readable logs the printed line alone says it.
    const { code, message } = describeFailure(failure);
    if (code !== EXIT.unexpected && !prettyLogs())
      logger.fatal({ err: message, exitCode: code }, code === EXIT.usage ? 'invalid configuration; not starting' : 'refused; not starting');
    throw failure;
  }
  // Signals are handled from before the term is taken: a SIGTERM at any point after start-up
  // begins leads to the clean shutdown (term invalidated, host lock released), never a bare kill;
  // a second signal during it forces the exit after the same two steps (shutdown.ts).
  const signals = new ShutdownSignals(logger);
  let terms: Array<{ supervisorKey: string; supervisorGeneration: number }> = [];
  void signals.requested.then(() => {
    terms = liveTerms(runtime);
  });
  signals.onForce(async () => {
    // The workers first: none outlives the host, not one that ignores SIGTERM (their writes
    // are fenced anyway; this is about processes left running).
    const killed = await killManagedChildren();
    if (killed > 0) logger.warn({ killed }, 'forced shutdown: worker processes killed');
    const store = openStore(runtime.config.database);
    try {
      for (const t of terms.length > 0 ? terms : liveTerms(runtime)) {
        await store.invalidateTerm(t.supervisorKey, { holderId: runtime.holderId, supervisorGeneration: t.supervisorGeneration }).catch(() => undefined);
      }
    } finally {
      releaseLock();
      await store.close().catch(() => undefined);
    }
    logger.warn({ invalidated: terms.map((t) => t.supervisorKey) }, 'forced shutdown: term invalidated, host lock released');
  });
  // Every runtime timer is unref'd (an idle SQLite runtime has none at all): this keeps the host
  // process alive until a signal asks it to stop.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  runtime.onFatal = (reason) => {
    logger.fatal({ reason }, 'runtime cannot continue; shutting down');
    signals.request('fatal');
  };
  // RFC 8, 10: rows expired during a pause and a start with another configuration was accepted
  // meanwhile; this process stops the same orderly way, with the exit code of a refused start.
  // Logged for machines and printed once as `apsup: ...`, as a refused start is.
  candidate!.onConflict = (error) => {
    if (!prettyLogs()) logger.fatal({ err: error.message, exitCode: EXIT.usage }, 'candidate fingerprint refused; shutting down');
    console.error(`apsup: ${error.message}`);
    signals.request('fingerprint');
  };
  let runner: TaskRunner | null = null;
  let observability: ObservabilityServer | null = null;
  let webConsole: ConsoleServer | null = null;
  let notify: NotifyChannel | null = null;
  let exitCode = 0;
  try {
    await runtime.start();
    // Durable tasks run in every process that runs background work (role all/background).
    if (runtime.config.role !== 'api') {
      const registry = await loadHostTaskRegistry(taskConfig.tasksModule);
      runner = new TaskRunner(
        new TaskStore(runtime.store as BaseStore),
        registry,
        taskConfig,
        childDatabase(runtime.accounts, runtime.config.leaseTtlMs, logger, { pool: 'tasks' }),
        logger,
      );
      await runner.start();
    }
    notify = await startNotify(notifyConfig, runtime.config.database, logger, [runtime, runner]);
    // Observability never stops processing: an endpoint that cannot bind (e.g. the default port
    // is taken by another process on this host) is reported and left out.
    if (observabilityAddress) {
      const explicit = (options.env ?? process.env)[OBSERVABILITY_ADDRESS_VARIABLE] !== undefined;
      // Imported here: prom-client is for a runtime that serves /metrics, not for every command.
      const { ObservabilityServer } = await import('../observability/server.ts');
      observability = await ObservabilityServer.start(runtime, { address: observabilityAddress, logger, taskRunner: runner }).catch((error: Error) => {
        (explicit ? logger.error : logger.info).call(
          logger,
          { address: observabilityAddress, err: error.message, variable: OBSERVABILITY_ADDRESS_VARIABLE },
          'observability endpoint not started',
        );
        return null;
      });
    }
    // The web console (POWERCONTEXT_SERVER_RUNTIME_CONSOLE_ADDRESS), with this host's live view;
    // like observability, one that cannot bind is reported and left out.
    if (consoleSettings.address) {
      const address = consoleSettings.address;
      const { ConsoleServer } = await import('../console/server.ts');
      webConsole = await ConsoleServer.start({
        address,
        store: runtime.store,
        config: runtime.config,
        taskConfig,
        token: consoleSettings.token,
        runtime,
        logger,
        env: options.env ?? process.env,
      }).catch((error: Error) => {
        logger.error({ address, err: error.message, variable: CONSOLE_ADDRESS_VARIABLE }, 'web console not started');
        return null;
      });
    }
    await onStarted?.(runtime);
    const signal = await signals.requested;
    if (signal === 'fatal') exitCode = EXIT.unexpected;
    else if (signal === 'fingerprint') exitCode = EXIT.usage;
    else logger.info({ signal }, 'signal received');
  } finally {
    clearInterval(keepAlive);
    await webConsole?.stop();
    await observability?.stop();
    await notify?.close();
    await runner?.stop();
    await candidate?.withdraw();
    await runtime.stop();
    releaseLock();
    signals.dispose();
  }
  return exitCode;
}

/** The terms this host holds now (invalidated by a forced shutdown). */
function liveTerms(runtime: Runtime): Array<{ supervisorKey: string; supervisorGeneration: number }> {
  return runtime
    .status()
    .supervisors.filter((s) => s.supervisorGeneration !== null)
    .map((s) => ({ supervisorKey: s.supervisorKey, supervisorGeneration: s.supervisorGeneration! }));
}
