/**
 * The parameters of pc_task_submit and of its batch form pc_task_submit_batch (issue 12 item 4),
 * validated the same way, and the batch's result rows. A batch passes one list per column: task
 * types, payloads and dedupe keys as their items concatenated plus an index of end offsets (an
 * empty key is none), versions, timeouts and resumed ids as fixed-width digits (0 for none), so
 * the SQL cuts any item in constant time (procedures/oceanbase/COMPATIBILITY.md row 111).
 */
import { InvalidArgumentError } from '../store/errors.ts';
import type { Params } from '../store/params.ts';
import type { Row } from '../store/rows.ts';
import { fixed, indexedList } from '../store/intake-batch.ts';
import { TYPE, requireRange } from './task-rows.ts';
import type { SubmitInput, SubmitResult, TaskState } from './task-types.ts';

export const SUBMIT_BATCH_MAX = 1000;
/** Payload text of one batch call, in UTF-8 bytes: stays well inside MySQL's default 16 MiB max_allowed_packet. */
export const SUBMIT_BATCH_MAX_PAYLOAD_BYTES = 8_000_000;

export interface SubmitColumns {
  task_type: string;
  handler_version: number;
  payload: string;
  dedupe_key: string | null;
  timeout_ms: number;
  resumed_from_task_id: number | null;
}

export function submitColumns(op: string, input: SubmitInput): SubmitColumns {
  if (typeof input.taskType !== 'string' || !TYPE.test(input.taskType)) throw new InvalidArgumentError(op, `task type must match ${TYPE}`);
  requireRange(op, 'handler version', input.handlerVersion, 0, 1_000_000);
  if (!Number.isFinite(input.timeoutMs) || input.timeoutMs <= 0 || Math.round(input.timeoutMs) < 1 || !Number.isSafeInteger(Math.round(input.timeoutMs))) {
    throw new InvalidArgumentError(op, `timeout must be a positive, finite number of milliseconds, got ${String(input.timeoutMs)}`);
  }
  if (
    input.dedupeKey !== undefined &&
    input.dedupeKey !== null &&
    (typeof input.dedupeKey !== 'string' || input.dedupeKey.length < 1 || [...input.dedupeKey].length > 191 || /^\s|\s$/.test(input.dedupeKey))
  ) {
    throw new InvalidArgumentError(op, 'dedupe key must be 1..191 characters without leading or trailing whitespace');
  }
  const resumed = input.resumedFromTaskId ?? null;
  if (resumed !== null) requireRange(op, 'resumed-from task id', resumed, 1, Number.MAX_SAFE_INTEGER);
  return {
    task_type: input.taskType,
    handler_version: input.handlerVersion,
    payload: JSON.stringify(input.payload ?? null),
    dedupe_key: input.dedupeKey ?? null,
    timeout_ms: Math.round(input.timeoutMs),
    resumed_from_task_id: resumed,
  };
}

export function submitBatchParams(inputs: readonly SubmitInput[]): Params {
  const op = 'pc_task_submit_batch';
  if (!Array.isArray(inputs) || inputs.length < 1 || inputs.length > SUBMIT_BATCH_MAX) {
    throw new InvalidArgumentError(op, `a batch holds 1..${SUBMIT_BATCH_MAX} tasks, got ${Array.isArray(inputs) ? inputs.length : typeof inputs}`);
  }
  const columns = inputs.map((input) => submitColumns(op, input));
  let bytes = 0;
  for (const c of columns) bytes += Buffer.byteLength(c.payload);
  if (bytes > SUBMIT_BATCH_MAX_PAYLOAD_BYTES) {
    throw new InvalidArgumentError(op, `the payloads of one batch may hold at most ${SUBMIT_BATCH_MAX_PAYLOAD_BYTES} bytes, got ${bytes}; split the batch`);
  }
  const types = indexedList(columns.map((c) => c.task_type));
  const payloads = indexedList(columns.map((c) => c.payload));
  const keys = indexedList(columns.map((c) => c.dedupe_key ?? ''));
  return {
    task_types: types.text,
    task_type_ends: types.ends,
    handler_versions: columns.map((c) => fixed(c.handler_version, 10)).join(''),
    payloads: payloads.text,
    payload_ends: payloads.ends,
    dedupe_keys: keys.text,
    dedupe_key_ends: keys.ends,
    timeouts_ms: columns.map((c) => fixed(c.timeout_ms, 18)).join(''),
    resumed_from_task_ids: columns.map((c) => fixed(c.resumed_from_task_id ?? 0, 18)).join(''),
  };
}

/** One result row per item, in input order (the row the single submit returns). */
export function toSubmitResults(rows: readonly Row[], inputs: readonly SubmitInput[]): SubmitResult[] {
  const op = 'pc_task_submit_batch';
  if (rows.length !== inputs.length) throw new Error(`${op}: ${rows.length} result rows for ${inputs.length} tasks`);
  return inputs.map((input, i) => ({
    taskId: Number(rows[i].task_id),
    state: String(rows[i].state) as TaskState,
    outcome: String(rows[i].outcome) as SubmitResult['outcome'],
    dedupeKey: input.dedupeKey ?? null,
  }));
}
