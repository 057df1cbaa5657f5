/**
 * Batched intake (issue 12 item 4): the parameters and result rows of pc_aps_mark_dirty_batch and
 * pc_aps_accept_request_batch, shared by both adapters. One call carries up to 1000 keys of one
 * binding; a key may repeat (each item is one mark or request, as the same single calls would be).
 * A list travels as its items concatenated plus an index of fixed-width end offsets in UTF-8
 * bytes, so the SQL cuts any item in constant time (procedures/oceanbase/COMPATIBILITY.md row 111).
 */
import { InvalidArgumentError } from './errors.ts';
import { assertBindingName, assertScopeId } from './identifiers.ts';
import { toIntent, type Row } from './rows.ts';
import type { IntentSnapshot } from './types.ts';

/** The largest batch of the intake operations (the procedures refuse more). */
export const INTAKE_BATCH_MAX = 1000;

export type IntentBatchOperation = 'pc_aps_mark_dirty_batch' | 'pc_aps_accept_request_batch';

/** Digits of one end offset in an index (up to 99,999,999 bytes: more than a packet holds). */
export const END_DIGITS = 8;

/** Fixed-width decimal digits of a non-negative integer. */
export function fixed(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** A list as text and index: the items concatenated, and each item's end offset in UTF-8 bytes. */
export function indexedList(items: readonly string[]): { text: string; ends: string } {
  let end = 0;
  let ends = '';
  for (const item of items) {
    end += Buffer.byteLength(item, 'utf8');
    ends += fixed(end, END_DIGITS);
  }
  return { text: items.join(''), ends };
}

export function intentBatchParams(
  op: IntentBatchOperation,
  bindingName: string,
  scopeIds: readonly string[],
): { binding_name: string; scope_ids: string; scope_ends: string } {
  assertBindingName(op, bindingName);
  if (!Array.isArray(scopeIds) || scopeIds.length < 1 || scopeIds.length > INTAKE_BATCH_MAX) {
    throw new InvalidArgumentError(op, `a batch holds 1..${INTAKE_BATCH_MAX} scope ids, got ${Array.isArray(scopeIds) ? scopeIds.length : typeof scopeIds}`);
  }
  for (const scopeId of scopeIds) assertScopeId(op, scopeId);
  const list = indexedList(scopeIds);
  return { binding_name: bindingName, scope_ids: list.text, scope_ends: list.ends };
}

/** One comma-separated list column of a batch result row, one item per input item. */
export function csvColumn(operation: string, row: Row, column: string, count: number): string[] {
  const items = String(row[column] ?? '').split(',');
  if (items.length !== count) throw new Error(`${operation}: ${column} has ${items.length} items for ${count} keys`);
  return items;
}

/** The intent after each item, in input order: one result row per item, as the single call's row. */
export function toIntentBatch(op: IntentBatchOperation, rows: readonly Row[], bindingName: string, scopeIds: readonly string[]): IntentSnapshot[] {
  if (rows.length !== scopeIds.length) throw new Error(`${op}: ${rows.length} result rows for ${scopeIds.length} keys`);
  return rows.map((row, i) => {
    const intent = toIntent(row);
    if (intent.bindingName !== bindingName || intent.scopeId !== scopeIds[i]) throw new Error(`${op}: result row ${i + 1} is not the intent of item ${i + 1}`);
    return intent;
  });
}
