/**
 * `apsup run`: validates configuration against the families module, migrates nothing, and runs
 * the supervisors until SIGINT/SIGTERM, then shuts down cleanly (discovery and dispatch stop,
 * workers are terminated within the grace period, the term is invalidated).
 */
import { ConfigError } from '../config/database-url.ts';
import { FAMILIES_MODULE_VARIABLE, ROLE_VARIABLE, parseRuntimeConfig, type RuntimeConfig } from '../config/runtime-config.ts';
import { CandidateRegistration } from '../registry/candidates.ts';
import { checkProfileSidecar } from './profile-sidecar-guard.ts';
import { createLogger, type Logger } from '../logging.ts';
import { REFERENCE_FAMILIES_MODULE, loadFamilies } from '../registry/load.ts';
import { RegistrationError } from '../registry/registration.ts';
import { Runtime } from '../runtime/runtime.ts';
import { HostLockError, acquireSqliteHostLock } from '../runtime/sqlite-host-lock.ts';
import { databaseUrlOf } from '../runtime/runtime.ts';
import type { BaseStore } from '../store/base-store.ts';
import { StoreError } from '../store/errors.ts';
import { parseTaskConfig, type TaskConfig } from '../tasks/config.ts';
import { loadTaskRegistry } from '../tasks/load.ts';
import { TaskRunner } from '../tasks/task-runner.ts';
import { TaskStore } from '../tasks/task-store.ts';
import { OBSERVABILITY_ADDRESS_VARIABLE, parseObservabilityAddress, type ObservabilityAddress } from '../observability/config.ts';
import { ObservabilityServer } from '../observability/server.ts';
import { parseNotifyConfig, type NotifyConfig } from '../notify/config.ts';
import { startNotify } from '../notify/start.ts';
import type { NotifyChannel } from '../notify/channel.ts';

export interface RunOptions {
  familiesModule?: string;
  role?: string;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** `apsup start`: the demo, the only run of the reference families. */
  demo?: boolean;
  /** The command, for messages (run, status, trigger, ...). */
  command?: string;
}

export async function buildRuntimeConfig(options: RunOptions): Promise<{ config: RuntimeConfig; module: string }> {
  const env = { ...(options.env ?? process.env) };
  if (options.role !== undefined) {
    if (!['all', 'api', 'background'].includes(options.role)) throw new ConfigError(`--role must be all, api or background, got ${JSON.stringify(options.role)}`);
    env[ROLE_VARIABLE] = options.role;
  }
  const modulePath = options.demo ? REFERENCE_FAMILIES_MODULE : options.familiesModule ?? env[FAMILIES_MODULE_VARIABLE];
  // RFC 8: the api role runs no processor, so it needs none of their files.
  const requireProcessors = (env[ROLE_VARIABLE]?.trim() || 'all') !== 'api';
  const { module, registrations } = await loadFamilies(modulePath, { allowReference: options.demo, command: options.command ?? 'run', requireProcessors });
  return { config: parseRuntimeConfig(env, registrations), module };
}

export async function runUntilSignal(options: RunOptions, onStarted?: (runtime: Runtime) => Promise<void> | void): Promise<number> {
  const logger = options.logger ?? createLogger();
  let runtime: Runtime;
  let releaseLock: () => void = () => undefined;
  let taskConfig: TaskConfig;
  let observabilityAddress: ObservabilityAddress | null;
  let notifyConfig: NotifyConfig | null;
  let mode = 'global';
  let candidate: CandidateRegistration | null = null;
  try {
    const { config, module } = await buildRuntimeConfig(options);
    taskConfig = parseTaskConfig(options.env ?? process.env);
    observabilityAddress = parseObservabilityAddress(options.env ?? process.env);
    notifyConfig = parseNotifyConfig(options.env ?? process.env);
    if (config.database.backend === 'sqlite' && config.role !== 'api') releaseLock = acquireSqliteHostLock(config.database.file);
    mode = config.mode;
    runtime = new Runtime(config, logger);
    logger.info({ familiesModule: module }, 'families module loaded');
    // A15: a variable nothing reads is most likely a typo of the closest known one.
    for (const u of config.unknownVariables) logger.warn({ variable: u.variable, closest: u.closest }, `unknown setting ${u.variable} is ignored (did you mean ${u.closest}?)`);
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
    if (error instanceof StoreError && (error.code === 'mode_mismatch' || error.code === 'maintenance')) {
      const message = error.code === 'mode_mismatch'
        ? `this database records supervisor mode ${mode === 'global' ? 'dedicated' : 'global'}; refusing to start in ${mode} mode (switch first: apsup mode-switch --to ${mode})`
        : 'the deployment is in maintenance (a mode switch or `apsup maintenance on`); not starting until it ends';
      logger.fatal({ err: message, code: error.code }, 'runtime mode refused; not starting');
      console.error(`apsup: ${message}`);
      return 2;
    }
    if (error instanceof ConfigError || error instanceof RegistrationError || error instanceof HostLockError) {
      logger.fatal({ err: error.message }, 'invalid configuration; not starting');
      console.error(`apsup: ${error.message}`);
      return 2;
    }
    throw error;
  }
  // Signals are handled from before the term is taken: a SIGTERM at any point after start-up
  // begins leads to the clean shutdown (term invalidated, host lock released), never a bare kill.
  let stopRequested!: (signal: string) => void;
  const stopped = new Promise<string>((resolve) => { stopRequested = resolve; });
  const onInt = () => stopRequested('SIGINT');
  const onTerm = () => stopRequested('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  // Every runtime timer is unref'd (an idle SQLite runtime has none at all): this keeps the host
  // process alive until a signal asks it to stop.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  runtime.onFatal = (reason) => {
    logger.fatal({ reason }, 'runtime cannot continue; shutting down');
    stopRequested('fatal');
  };
  let runner: TaskRunner | null = null;
  let observability: ObservabilityServer | null = null;
  let notify: NotifyChannel | null = null;
  let exitCode = 0;
  try {
    await runtime.start();
    // Durable tasks run in every process that runs background work (role all/background).
    if (runtime.config.role !== 'api') {
      const registry = await loadTaskRegistry(taskConfig.tasksModule);
      runner = new TaskRunner(new TaskStore(runtime.store as BaseStore), registry, taskConfig, databaseUrlOf(runtime.config.database), logger);
      await runner.start();
    }
    notify = await startNotify(notifyConfig, runtime.config.database, logger, [runtime, runner]);
    // Observability never stops processing: an endpoint that cannot bind (e.g. the default port
    // is taken by another process on this host) is reported and left out.
    if (observabilityAddress) {
      const explicit = (options.env ?? process.env)[OBSERVABILITY_ADDRESS_VARIABLE] !== undefined;
      observability = await ObservabilityServer.start(runtime, { address: observabilityAddress, logger, taskRunner: runner }).catch((error: Error) => {
        (explicit ? logger.error : logger.info).call(logger, { address: observabilityAddress, err: error.message, variable: OBSERVABILITY_ADDRESS_VARIABLE }, 'observability endpoint not started');
        return null;
      });
    }
    await onStarted?.(runtime);
    const signal = await stopped;
    if (signal === 'fatal') exitCode = 1;
    else logger.info({ signal }, 'signal received');
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
    clearInterval(keepAlive);
    await observability?.stop();
    await notify?.close();
    await runner?.stop();
    await candidate?.withdraw();
    await runtime.stop();
    releaseLock();
  }
  return exitCode;
}
