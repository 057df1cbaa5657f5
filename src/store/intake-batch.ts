/**
 * Batched intake (issue 12 item 4): the parameters and result rows of pc_aps_mark_dirty_batch and
 * pc_aps_accept_request_batch, shared by both adapters. One call carries up to 1000 keys of one
 * binding; a key may repeat (each item is one mark or request, as the same single calls would be).
 */
import { InvalidArgumentError } from './errors.ts';
import { assertBindingName, assertScopeId } from './identifiers.ts';
import type { Row } from './rows.ts';
import type { IntentSnapshot } from './types.ts';

/** The largest batch of the intake operations (the procedures refuse more). */
export const INTAKE_BATCH_MAX = 1000;

export type IntentBatchOperation = 'pc_aps_mark_dirty_batch' | 'pc_aps_accept_request_batch';

export function intentBatchParams(op: IntentBatchOperation, bindingName: string, scopeIds: readonly string[]): { binding_name: string; scope_ids: string } {
  assertBindingName(op, bindingName);
  if (!Array.isArray(scopeIds) || scopeIds.length < 1 || scopeIds.length > INTAKE_BATCH_MAX) {
    throw new InvalidArgumentError(op, `a batch holds 1..${INTAKE_BATCH_MAX} scope ids, got ${Array.isArray(scopeIds) ? scopeIds.length : typeof scopeIds}`);
  }
  for (const scopeId of scopeIds) assertScopeId(op, scopeId);
  return { binding_name: bindingName, scope_ids: scopeIds.join(',') };
}

/** One comma-separated list column of a batch result row, one item per input item. */
export function csvColumn(operation: string, row: Row, column: string, count: number): string[] {
  const items = String(row[column] ?? '').split(',');
  if (items.length !== count) throw new Error(`${operation}: ${column} has ${items.length} items for ${count} keys`);
  return items;
}

/** The intent after each item, in input order. */
export function toIntentBatch(op: IntentBatchOperation, row: Row, bindingName: string, scopeIds: readonly string[]): IntentSnapshot[] {
  const list = (column: string) => csvColumn(op, row, column, scopeIds.length).map(Number);
  const seq = list('pending_sequences');
  const dirty = list('dirty_generations');
  const clean = list('clean_generations');
  const requested = list('requested_generations');
  const handled = list('handled_generations');
  const scan = list('last_auto_scan_generations');
  return scopeIds.map((scopeId, i) => ({
    bindingName,
    scopeId,
    pendingSequence: seq[i],
    dirtyGeneration: dirty[i],
    cleanGeneration: clean[i],
    requestedGeneration: requested[i],
    handledGeneration: handled[i],
    lastAutoScanGeneration: scan[i],
  }));
}
