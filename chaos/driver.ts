/**
 * The input driver of a trial: appends inputs to a scope's journal and marks the key dirty in the
 * same transaction (a domain write, RFC 3); some appends also accept an explicit request there
 * (RFC 5). A failed append (a killed connection, a busy database) is retried; it never half-lands.
 */
import { txQuery } from '../src/store/tx-query.ts';
import { bindingOf } from './families.ts';
import type { TrialDb } from './db.ts';
import type { Prng } from './prng.ts';

export interface DriverStats {
  appends: number;
  inputs: number;
  requests: number;
  errors: number;
}

export async function appendInputs(db: TrialDb, family: string, scope: string, n: number, request: boolean): Promise<void> {
  await db.store.transaction(async (tx) => {
    const rows = await txQuery(tx, 'SELECT COALESCE(MAX(seq), 0) AS s FROM ch_inputs WHERE family = ? AND scope_id = ?', [family, scope]);
    const last = Number(rows[0]?.s ?? 0);
    for (let i = 1; i <= n; i += 1) {
      await txQuery(tx, 'INSERT INTO ch_inputs (family, scope_id, seq, requested) VALUES (?, ?, ?, ?)', [family, scope, last + i, request ? 1 : 0]);
    }
    await db.store.markDirty(bindingOf(family), scope, tx);
    if (request) await db.store.acceptRequest(bindingOf(family), scope, tx);
  });
}

/** One append with retries (bounded); counts into stats. */
export async function driveOnce(db: TrialDb, rng: Prng, families: readonly string[], scopes: number, stats: DriverStats): Promise<void> {
  const family = rng.pick(families);
  const scope = `s${rng.int(1, scopes)}`;
  const n = rng.int(1, 3);
  const request = rng.next() < 0.3;
  for (let attempt = 0; attempt < 20; attempt += 1) {
    try {
      await appendInputs(db, family, scope, n, request);
      stats.appends += 1;
      stats.inputs += n;
      if (request) stats.requests += 1;
      return;
    } catch {
      stats.errors += 1;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`driver: could not append to ${family}/${scope} in 20 attempts`);
}
