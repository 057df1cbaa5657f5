/**
 * Invariants of a drained trial (issue #10): (1) nothing lost, (2) exactly-once business effect,
 * (3) no stale-term write against the trigger-kept lease history, (4) single flight per key and
 * term, (6) the schema's own invariants. Each violation carries the offending rows.
 */
import { bindingOf } from './families.ts';
import type { TrialDb } from './db.ts';
import type { Exec } from './schema.ts';
import type { JournalEvent } from './journal.ts';

export interface Violation {
  invariant: string;
  key?: string;
  detail: string;
  rows?: unknown[];
}

const num = (v: unknown) => Number(v ?? 0);

interface Output {
  id: number;
  family: string;
  scope_id: string;
  seq: number;
  supervisor_generation: number;
  seen_generation: number;
  holder_id: string;
  written_at: string;
}
interface History {
  id: number;
  supervisor_key: string;
  holder_id: string | null;
  supervisor_generation: number;
  expires_at: string | null;
  at: string;
}

/** Keys with inputs whose intent or cursor is not settled (drain condition). */
export async function unsettledKeys(db: TrialDb): Promise<string[]> {
  const inputs = await db.exec('SELECT family, scope_id, MAX(seq) AS last FROM ch_inputs GROUP BY family, scope_id');
  const cursors = new Map(
    (await db.exec('SELECT family, scope_id, through_seq FROM ch_cursors')).map((r) => [`${r.family}/${r.scope_id}`, num(r.through_seq)]),
  );
  const out: string[] = [];
  for (const r of inputs) {
    const key = `${r.family}/${r.scope_id}`;
    const intent = await db.store.readIntent(bindingOf(String(r.family)), String(r.scope_id));
    const settled = intent && intent.requestedGeneration === intent.handledGeneration && intent.dirtyGeneration === intent.cleanGeneration;
    if (!settled || (cursors.get(key) ?? 0) !== num(r.last)) out.push(key);
  }
  return out;
}

export interface CheckStats {
  outputs: number;
  historyRows: number;
  writesPastExpiry: number;
}

/** Test hook: runs after each of the checker's reads (a regression test commits there). */
export type AfterRead = (sql: string) => Promise<void>;

export async function checkInvariants(
  db: TrialDb,
  journal: JournalEvent[],
  drained: boolean,
  stats: CheckStats = { outputs: 0, historyRows: 0, writesPastExpiry: 0 },
  afterRead?: AfterRead,
): Promise<Violation[]> {
  // Every read in one snapshot: a commit between two reads made a false 'lost' (run 2, fae82c0d-11).
  return db.snapshot(async (raw) => {
    const exec = async (sql: string, params?: unknown[]) => {
      const rows = await raw(sql, params);
      await afterRead?.(sql);
      return rows;
    };
    return checkRows(exec, journal, drained, stats);
  });
}

interface IntentRow {
  dirtyGeneration: number;
  cleanGeneration: number;
  requestedGeneration: number;
  handledGeneration: number;
}

async function checkRows(exec: Exec, journal: JournalEvent[], drained: boolean, stats: CheckStats): Promise<Violation[]> {
  const v: Violation[] = [];
  // (1) Nothing lost: a key the supervisor calls settled must have consumed every input.
  const inputs = await exec('SELECT family, scope_id, MAX(seq) AS last, COUNT(*) AS n FROM ch_inputs GROUP BY family, scope_id');
  const cursors = new Map((await exec('SELECT family, scope_id, through_seq FROM ch_cursors')).map((r) => [`${r.family}/${r.scope_id}`, num(r.through_seq)]));
  const intents = new Map<string, IntentRow>(
    (
      await exec(
        'SELECT binding_name, scope_id, dirty_generation, clean_generation, requested_generation, handled_generation FROM pc_artifact_processing_intents',
      )
    ).map((r) => [
      `${r.binding_name}/${r.scope_id}`,
      {
        dirtyGeneration: num(r.dirty_generation),
        cleanGeneration: num(r.clean_generation),
        requestedGeneration: num(r.requested_generation),
        handledGeneration: num(r.handled_generation),
      },
    ]),
  );
  for (const r of inputs) {
    const key = `${r.family}/${r.scope_id}`;
    const intent = intents.get(`${bindingOf(String(r.family))}/${r.scope_id}`);
    const through = cursors.get(key) ?? 0;
    const settled = intent && intent.requestedGeneration === intent.handledGeneration && intent.dirtyGeneration === intent.cleanGeneration;
    if (!intent) v.push({ invariant: 'lost', key, detail: 'inputs without an intent row', rows: [r] });
    else if (settled && through < num(r.last))
      v.push({ invariant: 'lost', key, detail: `settled (requested=handled, dirty=clean) but consumed through ${through} of ${num(r.last)}`, rows: [intent] });
    else if (!settled && drained) v.push({ invariant: 'lost', key, detail: 'drained but unsettled', rows: [intent] });
  }
  // (2) Exactly once: per scope, outputs in insertion order are 1..n, no gap, no duplicate.
  const outputs = (
    await exec('SELECT id, family, scope_id, seq, supervisor_generation, seen_generation, holder_id, written_at FROM ch_outputs ORDER BY id')
  ).map((r) => ({
    ...r,
    id: num(r.id),
    seq: num(r.seq),
    supervisor_generation: num(r.supervisor_generation),
    seen_generation: num(r.seen_generation),
  })) as unknown as Output[];
  const byKey = new Map<string, Output[]>();
  for (const o of outputs) {
    const key = `${o.family}/${o.scope_id}`;
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key)!.push(o);
  }
  for (const [key, rows] of byKey) {
    const bad = rows.filter((o, i) => o.seq !== i + 1);
    if (bad.length > 0)
      v.push({
        invariant: 'exactly-once',
        key,
        detail: `outputs are not 1..${rows.length} in order`,
        rows: rows.slice(Math.max(0, rows.indexOf(bad[0]) - 2), rows.indexOf(bad[0]) + 3),
      });
    const through = cursors.get(key) ?? 0;
    if (rows.length !== through) v.push({ invariant: 'exactly-once', key, detail: `${rows.length} outputs but cursor at ${through}` });
  }
  // (3) No stale-term write: at its write, the row's term was the newest and unexpired.
  const history = (await exec('SELECT id, supervisor_key, holder_id, supervisor_generation, expires_at, at FROM ch_lease_history ORDER BY id')).map((r) => ({
    ...r,
    id: num(r.id),
    supervisor_generation: num(r.supervisor_generation),
  })) as unknown as History[];
  stats.outputs = outputs.length;
  stats.historyRows = history.length;
  for (const o of outputs) {
    const before = history.filter((h) => h.at < o.written_at);
    const newer = before.filter((h) => h.supervisor_generation > o.supervisor_generation);
    const own = history.filter((h) => h.at <= o.written_at && h.supervisor_generation === o.supervisor_generation && h.holder_id === o.holder_id);
    const last = own[own.length - 1];
    if (newer.length > 0)
      v.push({
        invariant: 'stale-term',
        key: `${o.family}/${o.scope_id}`,
        detail: `written under generation ${o.supervisor_generation} after generation ${newer[0].supervisor_generation} was taken`,
        rows: [o, newer[0]],
      });
    else if (o.seen_generation !== o.supervisor_generation)
      v.push({ invariant: 'stale-term', key: `${o.family}/${o.scope_id}`, detail: `its transaction saw generation ${o.seen_generation} committed`, rows: [o] });
    else if (!last) v.push({ invariant: 'stale-term', key: `${o.family}/${o.scope_id}`, detail: 'no lease history of its term before the write', rows: [o] });
    // Past the last expiry but before any newer term: the fence's lock held the takeover off
    // (RFC 8 checks expiry when it locks); counted, not a violation.
    else if (last.expires_at !== null && last.expires_at < o.written_at) stats.writesPastExpiry += 1;
  }
  // (4) Single flight: the processor's probe saw a live invocation of the same key and term.
  for (const e of journal.filter((x) => x.ev === 'overlap'))
    v.push({
      invariant: 'single-flight',
      key: `${e.family}/${e.scope}`,
      detail: `pid ${e.pid} started while pid ${String(e.otherPid)} of term ${e.sgen} was alive`,
      rows: [e],
    });
  // (6) Schema invariants.
  const broken =
    await exec(`SELECT binding_name, scope_id, dirty_generation, clean_generation, requested_generation, handled_generation FROM pc_artifact_processing_intents
    WHERE clean_generation > dirty_generation OR handled_generation > requested_generation OR clean_generation < 0 OR handled_generation < 0`);
  for (const r of broken) v.push({ invariant: 'schema', key: `${r.binding_name}/${r.scope_id}`, detail: 'clean > dirty or handled > requested', rows: [r] });
  const leases = await exec('SELECT supervisor_key, holder_id, supervisor_generation FROM pc_artifact_processing_leases');
  if (leases.some((l) => l.supervisor_key !== 'global')) v.push({ invariant: 'schema', detail: 'a lease row other than global in global mode', rows: leases });
  const gens = history.map((h) => h.supervisor_generation);
  const down = gens.findIndex((g, i) => i > 0 && g < gens[i - 1]);
  if (down > 0) v.push({ invariant: 'schema', detail: 'the lease generation went down', rows: history.slice(down - 1, down + 1) });
  return v;
}
