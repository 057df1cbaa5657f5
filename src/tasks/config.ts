/** Durable task settings (POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_*), validated with zod. */
import { z } from 'zod';
import { ConfigError } from '../config/database-url.ts';
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
}

const P = 'POWERCONTEXT_SERVER_RUNTIME_DURABLE_TASK_';

export function parseTaskConfig(env: Record<string, string | undefined>): TaskConfig {
  const num = (name: string, fallback: number, opts: { int?: boolean; min?: number; max?: number } = {}) => {
    const raw = env[`${P}${name}`];
    if (raw === undefined || raw.trim() === '') return fallback;
    // Plain decimal text only: Number() would also take hex, exponents and signs (A15).
    if (!/^\d+(?:\.\d+)?$/.test(raw.trim())) throw new ConfigError(`${P}${name} must be a decimal number (got ${JSON.stringify(raw)})`);
    let schema = z.coerce.number({ message: 'must be a number' }).finite('must be finite').positive('must be positive');
    if (opts.int) schema = schema.int('must be an integer');
    const r = schema.safeParse(raw.trim());
    if (!r.success) throw new ConfigError(`${P}${name} ${r.error.issues[0]?.message ?? 'is invalid'} (got ${JSON.stringify(raw)})`);
    if (opts.min !== undefined && r.data < opts.min) throw new ConfigError(`${P}${name} must be at least ${opts.min}`);
    if (opts.max !== undefined && r.data > opts.max) throw new ConfigError(`${P}${name} must be at most ${opts.max}`);
    return r.data;
  };
  const maxTimeoutMs = Math.round(num('MAX_TIMEOUT_SECONDS', 26 * 3600) * 1000);
  // A task that does not lower its timeout runs under the worker maximum (the record: the worker
  // value is the contract, a task may only lower it). DEFAULT_TIMEOUT_SECONDS may lower the default.
  const defaultTimeoutMs = Math.round(num('DEFAULT_TIMEOUT_SECONDS', maxTimeoutMs / 1000) * 1000);
  if (defaultTimeoutMs > maxTimeoutMs) throw new ConfigError(`${P}DEFAULT_TIMEOUT_SECONDS must not exceed ${P}MAX_TIMEOUT_SECONDS`);
  const leaseMs = Math.round(num('LEASE_SECONDS', 30, { min: 1, max: 3600 }) * 1000);
  return {
    tasksModule: env.POWERCONTEXT_SERVER_RUNTIME_TASKS_MODULE?.trim() || REFERENCE_TASKS_MODULE,
    capacity: num('CAPACITY', 4, { int: true, max: 10_000 }),
    leaseMs,
    maxTimeoutMs,
    defaultTimeoutMs,
    sweepMs: Math.round(num('SWEEP_SECONDS', 30, { min: 0.1, max: 86_400 }) * 1000),
    readinessTtlMs: Math.max(1000, Math.round(num('READINESS_TTL_SECONDS', 15, { min: 1, max: 600 }) * 1000)),
    terminateGraceMs: Math.round(num('TERMINATE_GRACE_SECONDS', 5, { min: 0.1, max: 600 }) * 1000),
    progressMinStep: num('PROGRESS_MIN_STEP', 1),
    wakeupPollMs: Math.round(num('WAKEUP_POLL_MS', 500, { min: 50, max: 60_000 })),
    maxAttempts: num('MAX_ATTEMPTS', 3, { int: true, max: 1000 }),
    failureHookMaxAttempts: num('FAILURE_HOOK_MAX_ATTEMPTS', 5, { int: true, max: 1000 }),
    failureHookTimeoutMs: Math.round(num('FAILURE_HOOK_TIMEOUT_SECONDS', 10, { min: 0.1, max: 3600 }) * 1000),
    workerMaxAttempts: num('WORKER_MAX_ATTEMPTS', 100, { int: true, min: 1, max: 1_000_000 }),
  };
}
