/**
 * The parameters of pc_task_submit and of its batch form pc_task_submit_batch (issue 12 item 4),
 * validated the same way, and the batch's result row. A batch passes one list per column: task
 * types, versions, timeouts and resumed ids comma-separated; payloads and dedupe keys
 * length-prefixed ('<n>:' and n characters, '~' for no key), since they may hold commas
 * (procedures/oceanbase/COMPATIBILITY.md row 82).
 */
import { InvalidArgumentError } from '../store/errors.ts';
import type { Params } from '../store/base-store.ts';
import type { Row } from '../store/rows.ts';
import { csvColumn } from '../store/intake-batch.ts';
import { TYPE, requireRange } from './task-rows.ts';
import type { SubmitInput, SubmitResult, TaskState } from './task-store.ts';

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

/** Characters as the databases count them (code points; a lone surrogate is one). */
export function codePointLength(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

function lengthPrefixed(text: string): string {
  return `${codePointLength(text)}:${text}`;
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
  return {
    task_types: columns.map((c) => c.task_type).join(','),
    handler_versions: columns.map((c) => c.handler_version).join(','),
    payloads: columns.map((c) => lengthPrefixed(c.payload)).join(''),
    dedupe_keys: columns.map((c) => (c.dedupe_key === null ? '~' : lengthPrefixed(c.dedupe_key))).join(''),
    timeouts_ms: columns.map((c) => c.timeout_ms).join(','),
    resumed_from_task_ids: columns.map((c) => (c.resumed_from_task_id === null ? '' : String(c.resumed_from_task_id))).join(','),
  };
}

export function toSubmitResults(row: Row, inputs: readonly SubmitInput[]): SubmitResult[] {
  const op = 'pc_task_submit_batch';
  const ids = csvColumn(op, row, 'task_ids', inputs.length);
  const states = csvColumn(op, row, 'states', inputs.length);
  const outcomes = csvColumn(op, row, 'outcomes', inputs.length);
  return inputs.map((input, i) => ({
    taskId: Number(ids[i]),
    state: states[i] as TaskState,
    outcome: outcomes[i] as SubmitResult['outcome'],
    dedupeKey: input.dedupeKey ?? null,
  }));
}
