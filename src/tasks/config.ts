/** Durable task settings (POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_*), from the one configuration. */
import { ConfigError } from '../config/database-url.ts';
import { readSettings, type Settings } from '../config/settings.ts';
import { REFERENCE_TASKS_MODULE } from './load.ts';

export interface TaskConfig {
  tasksModule: string;
  /** Attempts this process runs at once; the cap across processes is the database's (ADR T6, `apsup tasks set-capacity`). */
  capacity: number;
  leaseMs: number;
  maxTimeoutMs: number;
  defaultTimeoutMs: number;
  sweepMs: number;
  readinessTtlMs: number;
  terminateGraceMs: number;
  progressMinStep: number;
  /** MySQL/OceanBase: period of the pending-work probe while the worker has free capacity. */
  wakeupPollMs: number;
  /** Attempts an idempotent task may reach through automatic requeues (then retries_exhausted). */
  maxAttempts: number;
  /** Failed convergences (failure hook throwing) of one attempt before it is failed without the hook. */
  failureHookMaxAttempts: number;
  /** Time bound of one convergence transaction (the failure hook inside it); then rolled back. */
  failureHookTimeoutMs: number;
  /** Attempts one warm task worker process runs before it is retired (1: a fresh process per attempt). */
  workerMaxAttempts: number;
  /** Whether a warm task worker keeps its handler modules across attempts (handler-modules.ts). */
  moduleIsolation: 'process' | 'attempt';
  /** Processes started ahead of need, and the most started at once on demand (attempt-pool.ts); <= capacity. */
  warmWorkers: number;
}

const P = 'POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_';

/** The durable-task part of the one configuration (src/config/settings.ts). */
export function parseTaskConfig(env: Record<string, string | undefined>, settings: Settings = readSettings(env)): TaskConfig {
  const s = settings;
  const maxTimeoutMs = Math.round(s.DURABLE_TASK_MAX_TIMEOUT_SECONDS * 1000);
  // A task that does not lower its timeout runs under the worker maximum (the record: the worker
  // value is the contract, a task may only lower it). DEFAULT_TIMEOUT_SECONDS may lower the default.
  const defaultTimeoutMs = s.DURABLE_TASK_DEFAULT_TIMEOUT_SECONDS === undefined ? maxTimeoutMs : Math.round(s.DURABLE_TASK_DEFAULT_TIMEOUT_SECONDS * 1000);
  if (defaultTimeoutMs > maxTimeoutMs) throw new ConfigError(`${P}DEFAULT_TIMEOUT_SECONDS must not exceed ${P}MAX_TIMEOUT_SECONDS`);
  const warmWorkers = s.DURABLE_TASK_WARM_WORKERS ?? s.DURABLE_TASK_CAPACITY;
  if (warmWorkers > s.DURABLE_TASK_CAPACITY) throw new ConfigError(`${P}WARM_WORKERS must not exceed ${P}CAPACITY (${s.DURABLE_TASK_CAPACITY})`);
  return {
    tasksModule: s.TASKS_MODULE ?? REFERENCE_TASKS_MODULE,
    capacity: s.DURABLE_TASK_CAPACITY,
    leaseMs: Math.round(s.DURABLE_TASK_LEASE_SECONDS * 1000),
    maxTimeoutMs,
    defaultTimeoutMs,
    sweepMs: Math.round(s.DURABLE_TASK_SWEEP_SECONDS * 1000),
    readinessTtlMs: Math.max(1000, Math.round(s.DURABLE_TASK_READINESS_TTL_SECONDS * 1000)),
    terminateGraceMs: Math.round(s.DURABLE_TASK_TERMINATE_GRACE_SECONDS * 1000),
    progressMinStep: s.DURABLE_TASK_PROGRESS_MIN_STEP,
    wakeupPollMs: Math.round(s.DURABLE_TASK_WAKEUP_POLL_MS),
    maxAttempts: s.DURABLE_TASK_MAX_ATTEMPTS,
    failureHookMaxAttempts: s.DURABLE_TASK_FAILURE_HOOK_MAX_ATTEMPTS,
    failureHookTimeoutMs: Math.round(s.DURABLE_TASK_FAILURE_HOOK_TIMEOUT_SECONDS * 1000),
    workerMaxAttempts: s.DURABLE_TASK_WORKER_MAX_ATTEMPTS ?? (s.DURABLE_TASK_MODULE_ISOLATION === 'attempt' ? 100 : 10_000),
    moduleIsolation: s.DURABLE_TASK_MODULE_ISOLATION,
    warmWorkers,
  };
}
