/**
 * Reference family in the manner of Experience: no source journal; a domain change version per
 * scope. An invocation refreshes the scope to the version it read; a newer version stays dirty.
 */
import path from 'node:path';
import { SRC_DIR } from '../paths.ts';
import type { FamilyRegistration } from '../registry/registration.ts';
import type { Store, TxHandle } from '../store/types.ts';
import { forUpdate, scalar } from './domain.ts';
import { txQuery } from '../store/tx-query.ts';

export const EXPERIENCE_BINDING = 'experience.refresh';

export const experience: FamilyRegistration = {
  bindingName: EXPERIENCE_BINDING,
  family: 'experience',
  configPrefix: 'EXPERIENCE',
  schedule: { kind: 'interval', seconds: 900 },
  // From SRC_DIR, not this module's URL: the compiled CLI bundles this module (demo seeding).
  processor: { module: path.join(SRC_DIR, 'families', 'experience.processor.ts') },
  defaults: { maxWorkers: 2, workerTimeoutSeconds: 1800 },
};

/** Domain API: a domain change of the scope (version + 1) and its dirty mark, in one transaction. */
export async function bumpExperience(store: Store, scopeId: string, tx?: TxHandle): Promise<number> {
  const run = async (t: TxHandle) => {
    const version = (await scalar(t, `SELECT version FROM ref_experience_items WHERE scope_id = ?${forUpdate(store.backend)}`, [scopeId])) + 1;
    if (version === 1) await txQuery(t, 'INSERT INTO ref_experience_items (scope_id, version) VALUES (?, 1)', [scopeId]);
    else await txQuery(t, 'UPDATE ref_experience_items SET version = ? WHERE scope_id = ?', [version, scopeId]);
    await store.markDirty(EXPERIENCE_BINDING, scopeId, t);
    return version;
  };
  return tx ? run(tx) : store.transaction(run);
}
