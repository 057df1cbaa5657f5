/**
 * Workload processor of the chaos suite (runs in worker child processes). Per scope it consumes
 * the ordered inputs ch_inputs after its cursor, and in one fenced transaction (ctx.commit) checks
 * the cursor (CAS), writes one ch_outputs row per input with the term and the database time of the
 * write and the newest term it sees (the stale-term checks of the checker), moves the cursor and acknowledges with
 * confirm-clean (every input of the snapshot consumed: inputs and dirty mark share a transaction).
 * A seeded choice makes it throw, overrun its timeout, exit before or after the commit, or be slow
 * inside the commit (RFC 6, 7); from the 5th invocation of a key on it behaves, so drains end.
 */
import fs from 'node:fs';
import { writeJsonAtomic } from '../src/devtools/files.ts';
import { ConflictError, defineProcessor } from '../src/sdk/processor.ts';
import { DIR_VARIABLE, MISBEHAVE_VARIABLE, SEED_VARIABLE, appendEvent, bumpCounter, curFile, isAlive } from './journal.ts';
import { Prng, hash32 } from './prng.ts';

export const BEHAVIOURS = ['ok', 'throw_before', 'throw_after', 'timeout', 'exit_before', 'exit_after', 'slow_commit'] as const;
export type Behaviour = (typeof BEHAVIOURS)[number];

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const num = (v: unknown) => (v === null || v === undefined ? 0 : Number(v));

export function chooseBehaviour(seed: string, family: string, scope: string, claimed: number, attempt: number, misbehave: number): Behaviour {
  if (attempt >= 5) return 'ok';
  const rng = new Prng(hash32(seed, family, scope, claimed, attempt));
  if (rng.next() >= misbehave) return 'ok';
  const b = rng.pick(BEHAVIOURS.slice(1));
  // An overrun costs a whole timeout: only on a key's first invocation.
  return b === 'timeout' && attempt > 1 ? 'throw_before' : b;
}

let current: { dir: string; family: string; scope: string; sgen: number; claimed: number } | null = null;
process.on('exit', (code) => {
  if (!current) return;
  appendEvent(current.dir, { ev: 'end', family: current.family, scope: current.scope, sgen: current.sgen, claimed: current.claimed, how: `exit ${code}` });
  try {
    fs.unlinkSync(curFile(current.dir, current.family, current.scope));
  } catch {
    /* gone */
  }
});

function begin(dir: string, family: string, scope: string, sgen: number, claimed: number, holder: string): void {
  const file = curFile(dir, family, scope);
  try {
    const prev = JSON.parse(fs.readFileSync(file, 'utf8')) as { pid: number; sgen: number; claimed: number };
    if (prev.pid !== process.pid && prev.sgen === sgen && isAlive(prev.pid)) {
      appendEvent(dir, { ev: 'overlap', family, scope, sgen, claimed, holder, otherPid: prev.pid, otherClaimed: prev.claimed });
    }
  } catch {
    /* no invocation running */
  }
  // Whole or not at all: an overlapping invocation that read half of it would miss the overlap.
  writeJsonAtomic(file, { pid: process.pid, sgen, claimed });
  current = { dir, family, scope, sgen, claimed };
  appendEvent(dir, { ev: 'start', family, scope, sgen, claimed, holder });
}

function end(how: string): void {
  if (!current) return;
  const c = current;
  current = null;
  try {
    const prev = JSON.parse(fs.readFileSync(curFile(c.dir, c.family, c.scope), 'utf8')) as { pid: number };
    if (prev.pid === process.pid) fs.unlinkSync(curFile(c.dir, c.family, c.scope));
  } catch {
    /* gone */
  }
  appendEvent(c.dir, { ev: 'end', family: c.family, scope: c.scope, sgen: c.sgen, claimed: c.claimed, how });
}

export default defineProcessor({
  async processScope(scopeId, ctx) {
    const dir = process.env[DIR_VARIABLE];
    if (!dir) throw new Error(`${DIR_VARIABLE} is not set`);
    const family = ctx.artifactFamily;
    const sgen = ctx.supervisorGeneration;
    const claimed = ctx.claimedRequestGeneration;
    begin(dir, family, scopeId, sgen, claimed, ctx.holderId);
    const behaviour = chooseBehaviour(
      process.env[SEED_VARIABLE] ?? '0',
      family,
      scopeId,
      claimed,
      bumpCounter(dir, family, scopeId),
      Number(process.env[MISBEHAVE_VARIABLE] ?? '0.3'),
    );
    if (behaviour !== 'ok') appendEvent(dir, { ev: 'behaviour', family, scope: scopeId, sgen, claimed, behaviour });
    try {
      const cursorRows = await ctx.read.query('SELECT through_seq FROM ch_cursors WHERE family = ? AND scope_id = ?', [family, scopeId]);
      const cursor = cursorRows.length > 0 ? num(cursorRows[0].through_seq) : 0;
      const inputs = (
        await ctx.read.query('SELECT seq FROM ch_inputs WHERE family = ? AND scope_id = ? AND seq > ? ORDER BY seq', [family, scopeId, cursor])
      ).map((r) => num(r.seq));
      if (behaviour === 'throw_before') throw new Error('chaos: throw before commit');
      if (behaviour === 'exit_before') process.exit(41);
      if (behaviour === 'timeout') await sleep(60_000);
      const lock = ctx.backend === 'sqlite' ? '' : ' FOR UPDATE';
      const now = ctx.backend === 'sqlite' ? "strftime('%Y-%m-%d %H:%M:%f', 'now')" : "DATE_FORMAT(SYSDATE(6), '%Y-%m-%d %H:%i:%s.%f')";
      await ctx.commit(
        async (tx) => {
          const rows = await tx.query(`SELECT through_seq FROM ch_cursors WHERE family = ? AND scope_id = ?${lock}`, [family, scopeId]);
          const at = rows.length > 0 ? num(rows[0].through_seq) : 0;
          if (at !== cursor) throw new ConflictError(`cursor of ${scopeId} moved from ${cursor} to ${at}`);
          if (behaviour === 'slow_commit') await sleep(400);
          // The newest committed term as this transaction sees it (READ COMMITTED): a newer one
          // committed meanwhile is a stale-term write if this transaction commits. Read from the
          // history the lease table's triggers write in the same transactions: a processor's
          // account has no privilege on the supervisor's tables (issue 40).
          const lease = await tx.query('SELECT MAX(supervisor_generation) AS supervisor_generation FROM ch_lease_history WHERE supervisor_key = ?', [
            ctx.supervisorKey,
          ]);
          const seen = num(lease[0]?.supervisor_generation);
          for (const seq of inputs) {
            await tx.query(
              `INSERT INTO ch_outputs (family, scope_id, seq, supervisor_generation, seen_generation, holder_id, claimed_generation, worker_pid, written_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ${now})`,
              [family, scopeId, seq, sgen, seen, ctx.holderId, claimed, process.pid],
            );
          }
          if (inputs.length === 0) return;
          const through = inputs[inputs.length - 1];
          if (rows.length > 0) await tx.query('UPDATE ch_cursors SET through_seq = ? WHERE family = ? AND scope_id = ?', [through, family, scopeId]);
          else await tx.query('INSERT INTO ch_cursors (family, scope_id, through_seq) VALUES (?, ?, ?)', [family, scopeId, through]);
        },
        { acknowledge: true, confirmClean: true },
      );
      if (behaviour === 'exit_after') process.exit(42);
      if (behaviour === 'throw_after') throw new Error('chaos: throw after commit');
      end('ok');
    } catch (error) {
      end(`threw ${(error as Error).name}`);
      throw error;
    }
  },
});
