/** Row mapping and argument validation shared by the durable task operations (task-store.ts). */
import { InvalidArgumentError } from '../store/errors.ts';
import { dbTime, type Row } from '../store/rows.ts';
import type { ClaimedTask, TaskDetail, TaskState, TaskSummary } from './task-types.ts';

export const TYPE = /^[a-z][a-z0-9_.:-]{0,127}$/;
export const WORKER = /^[A-Za-z0-9_.:@-]{1,128}$/;

export function n(v: unknown): number {
  return Number(v);
}
export function nOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}
export function sOrNull(v: unknown): string | null {
  return v === null || v === undefined ? null : String(v);
}
export function json(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  try {
    return JSON.parse(String(v));
  } catch {
    return String(v);
  }
}
export function requireId(op: string, taskId: number): void {
  if (!Number.isSafeInteger(taskId) || taskId < 1) throw new InvalidArgumentError(op, `task id must be a positive integer, got ${String(taskId)}`);
}
export function requireToken(op: string, token: string): void {
  if (typeof token !== 'string' || !/^[0-9a-f-]{32,36}$/.test(token)) throw new InvalidArgumentError(op, 'attempt token is malformed');
}
export function requireRange(op: string, what: string, v: number, min: number, max: number): void {
  if (!Number.isSafeInteger(v) || v < min || v > max) throw new InvalidArgumentError(op, `${what} must be an integer in ${min}..${max}, got ${String(v)}`);
}
export function requireWorker(op: string, workerId: string): void {
  if (!WORKER.test(workerId)) throw new InvalidArgumentError(op, `worker id must match ${WORKER}`);
}
/** A claim's lease: 1 s to 1 h. */
export function requireLease(op: string, leaseMs: number): void {
  requireRange(op, 'lease', leaseMs, 1000, 3_600_000);
}

export function toSummary(r: Row): TaskSummary {
  return {
    taskId: n(r.task_id),
    taskType: String(r.task_type),
    handlerVersion: n(r.handler_version),
    state: String(r.state) as TaskState,
    dedupeKey: sOrNull(r.dedupe_key),
    attemptCount: n(r.attempt_count),
    progressCurrent: nOrNull(r.progress_current),
    progressTotal: nOrNull(r.progress_total),
    progressMessage: sOrNull(r.progress_message),
    cancelRequested: n(r.cancel_requested) === 1,
    createdAt: dbTime(r.created_at)!,
    finishedAt: dbTime(r.finished_at),
  };
}

/** The task types a worker knows, as the comma-separated list the claim and the probe take. */
export function typeList(op: string, taskTypes: readonly string[]): string {
  if (!Array.isArray(taskTypes) || taskTypes.length < 1 || taskTypes.length > 1000)
    throw new InvalidArgumentError(op, 'task types must be a list of 1..1000 types');
  for (const t of taskTypes) if (typeof t !== 'string' || !TYPE.test(t)) throw new InvalidArgumentError(op, `task type must match ${TYPE}`);
  return taskTypes.join(',');
}

export function toClaimed(r: Record<string, unknown>): ClaimedTask {
  return {
    taskId: n(r.task_id),
    taskType: String(r.task_type),
    handlerVersion: n(r.handler_version),
    payload: json(r.payload),
    timeoutMs: n(r.timeout_ms),
    attemptCount: n(r.attempt_count),
    attemptToken: String(r.attempt_token),
    attemptOwner: String(r.attempt_owner),
    leaseExpiresAt: dbTime(r.lease_expires_at)!,
    resumedFromTaskId: nOrNull(r.resumed_from_task_id),
    dbNow: dbTime(r.db_now)!,
  };
}

/** pc_task_read's row: the summary with the payload, the attempt and the outcome. */
export function toDetail(r: Row): TaskDetail {
  return {
    ...toSummary(r),
    payload: json(r.payload),
    timeoutMs: n(r.timeout_ms),
    attemptToken: sOrNull(r.attempt_token),
    attemptOwner: sOrNull(r.attempt_owner),
    heartbeatAt: dbTime(r.heartbeat_at),
    leaseExpiresAt: dbTime(r.lease_expires_at),
    result: json(r.result),
    errorCode: sOrNull(r.error_code),
    errorMessage: sOrNull(r.error_message),
    resumedFromTaskId: nOrNull(r.resumed_from_task_id),
    startedAt: dbTime(r.started_at),
    updatedAt: dbTime(r.updated_at)!,
    dbNow: dbTime(r.db_now)!,
  };
}
