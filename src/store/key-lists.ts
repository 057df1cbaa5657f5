/**
 * The list forms of the supervisor's per-key operations (pc_aps_read_intents,
 * pc_aps_acknowledge_batch): comma-separated lists in, one row of comma-separated lists out, in
 * input order (procedures/oceanbase/COMPATIBILITY.md row 35). Scope ids never contain commas.
 */
import { InvalidArgumentError } from './errors.ts';
import { assertBindingName } from './identifiers.ts';
import { csvColumn } from './intake-batch.ts';
import { ackParams, keyParams, termParams, type Params } from './params.ts';
import type { Row } from './rows.ts';
import type { AckRequest, AckResult, IntentSnapshot, Term } from './types.ts';

/** The most keys one list call carries (the procedures refuse more). */
const LIST_MAX = 1000;

export function readIntentsParams(op: string, bindingName: string, scopeIds: readonly string[]): Params {
  assertBindingName(op, bindingName);
  if (scopeIds.length < 1 || scopeIds.length > LIST_MAX) throw new InvalidArgumentError(op, `1..${LIST_MAX} scope ids, got ${scopeIds.length}`);
  for (const scopeId of scopeIds) keyParams(op, bindingName, scopeId);
  return { binding_name: bindingName, scope_ids: scopeIds.join(',') };
}

/** Each key's snapshot, or null where the key was never registered (an empty item). */
export function toIntentList(op: string, row: Row, bindingName: string, scopeIds: readonly string[]): Array<IntentSnapshot | null> {
  const list = (column: string) => csvColumn(op, row, column, scopeIds.length);
  const seq = list('pending_sequences');
  const dirty = list('dirty_generations');
  const clean = list('clean_generations');
  const requested = list('requested_generations');
  const handled = list('handled_generations');
  const scan = list('last_auto_scan_generations');
  return scopeIds.map((scopeId, i) =>
    seq[i] === ''
      ? null
      : {
          bindingName,
          scopeId,
          pendingSequence: Number(seq[i]),
          dirtyGeneration: Number(dirty[i]),
          cleanGeneration: Number(clean[i]),
          requestedGeneration: Number(requested[i]),
          handledGeneration: Number(handled[i]),
          lastAutoScanGeneration: Number(scan[i]),
        },
  );
}

export function ackBatchParams(op: string, term: Term, bindingName: string, acks: readonly AckRequest[]): Params {
  assertBindingName(op, bindingName);
  if (acks.length < 1 || acks.length > LIST_MAX) throw new InvalidArgumentError(op, `a batch holds 1..${LIST_MAX} acknowledgements, got ${acks.length}`);
  const scopes: string[] = [];
  const claimed: number[] = [];
  const cleans: string[] = [];
  for (const ack of acks) {
    if (ack.bindingName !== bindingName) throw new InvalidArgumentError(op, 'every acknowledgement of a batch belongs to its binding');
    const p = ackParams(op, term, ack);
    scopes.push(String(p.scope_id));
    claimed.push(Number(p.claimed_request_generation));
    cleans.push(p.clean_through_dirty_generation === null ? '' : String(p.clean_through_dirty_generation));
  }
  return {
    ...termParams(op, term),
    binding_name: bindingName,
    scope_ids: scopes.join(','),
    claimed_generations: claimed.join(','),
    clean_throughs: cleans.join(','),
  };
}

/** Each acknowledgement's committed row, in input order. */
export function toAckBatch(op: string, row: Row, bindingName: string, acks: readonly AckRequest[]): AckResult[] {
  const list = (column: string) => csvColumn(op, row, column, acks.length);
  const outcomes = list('outcomes');
  const requested = list('requested_generations');
  const handled = list('handled_generations');
  const dirty = list('dirty_generations');
  const clean = list('clean_generations');
  return acks.map((ack, i) => ({
    bindingName,
    scopeId: ack.scopeId,
    outcome: outcomes[i] as AckResult['outcome'],
    requestedGeneration: Number(requested[i]),
    handledGeneration: Number(handled[i]),
    dirtyGeneration: Number(dirty[i]),
    cleanGeneration: Number(clean[i]),
  }));
}
