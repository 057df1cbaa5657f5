/** pc_aps_read_mode_leases: every lease row of one mode the database holds (RFC 9, `apsup mode-switch`). */
import type { BaseStore } from './base-store.ts';
import { InvalidArgumentError } from './errors.ts';
import { toLeaseRead } from './rows.ts';
import type { LeaseRead, RuntimeMode, Store } from './types.ts';

export async function readModeLeases(store: Store, mode: RuntimeMode): Promise<LeaseRead[]> {
  const op = 'pc_aps_read_mode_leases';
  if (mode !== 'global' && mode !== 'dedicated') throw new InvalidArgumentError(op, `mode must be global or dedicated, got ${String(mode)}`);
  const sets = await (store as BaseStore).callOperation(op, { mode });
  return (sets[sets.length - 1] ?? []).map(toLeaseRead);
}
