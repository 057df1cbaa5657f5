// The chaos suite's invariant checker (chaos/checker.ts) on both backends: a clean history has no
// violation, and each broken invariant is found with its rows: a stale-term write (a row written
// under generation 1 after generation 2 was taken, seen through the trigger-kept lease history of
// real pc_aps_* term operations), a duplicate in a scope's outputs, a settled key with
// an unconsumed input, a write whose transaction saw a newer term committed, and a single-flight overlap reported by the processor's probe.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { checkInvariants } from '../../chaos/checker.ts';
import { openTrialDb, type TrialDb } from '../../chaos/db.ts';
import { appendInputs } from '../../chaos/driver.ts';
import { bindingOf } from '../../chaos/families.ts';
import type { JournalEvent } from '../../chaos/journal.ts';
import { nowExpr } from '../../chaos/schema.ts';
import { BACKENDS } from '../helpers/backends.ts';

for (const backend of BACKENDS) {
  describe(`chaos checker (${backend})`, () => {
    let db: TrialDb;
    let gen1: number;
    const out = (scope: string, seq: number, gen: number, holder: string, seen?: number) =>
      db.exec(
        `INSERT INTO ch_outputs (family, scope_id, seq, supervisor_generation, seen_generation, holder_id, claimed_generation, worker_pid, written_at)
        VALUES ('ch-a', ?, ?, ?, ?, ?, 1, 1, ${nowExpr(backend)})`,
        [scope, seq, gen, seen ?? gen, holder],
      );
    const settle = async (scope: string, through: number) => {
      await db.exec('INSERT INTO ch_cursors (family, scope_id, through_seq) VALUES (?, ?, ?)', ['ch-a', scope, through]);
      await db.exec(
        `UPDATE pc_artifact_processing_intents SET clean_generation = dirty_generation, handled_generation = requested_generation
        WHERE binding_name = ? AND scope_id = ?`,
        [bindingOf('ch-a'), scope],
      );
    };

    before(async () => {
      db = await openTrialDb(backend);
      const a = await db.store.acquireTerm('global', 'holder-a', 60_000);
      gen1 = a.supervisorGeneration;
      await appendInputs(db, 'ch-a', 'ok', 2, true);
      await out('ok', 1, gen1, 'holder-a');
      await out('ok', 2, gen1, 'holder-a');
      await settle('ok', 2);
    });
    after(async () => {
      await db?.cleanup();
    });

    test('a clean history has no violation; the trigger recorded the term', async () => {
      const history = await db.exec('SELECT supervisor_generation, holder_id FROM ch_lease_history');
      assert.ok(
        history.some((h) => Number(h.supervisor_generation) === gen1 && h.holder_id === 'holder-a'),
        JSON.stringify(history),
      );
      assert.deepEqual(await checkInvariants(db, [], true), []);
    });

    test('duplicate, lost input, overlap and stale-term write are each found', async () => {
      await appendInputs(db, 'ch-a', 'dup', 2, false);
      await out('dup', 1, gen1, 'holder-a');
      await out('dup', 1, gen1, 'holder-a');
      await settle('dup', 2);
      await appendInputs(db, 'ch-a', 'lost', 3, false);
      for (const seq of [1, 2]) await out('lost', seq, gen1, 'holder-a');
      await settle('lost', 2);
      await db.store.invalidateTerm('global');
      const b = await db.store.acquireTerm('global', 'holder-b', 60_000);
      assert.ok(b.supervisorGeneration > gen1);
      await new Promise((r) => setTimeout(r, 5));
      await appendInputs(db, 'ch-a', 'stale', 1, false);
      await out('stale', 1, gen1, 'holder-a');
      await settle('stale', 1);
      await appendInputs(db, 'ch-a', 'seen', 1, false);
      await out('seen', 1, b.supervisorGeneration, 'holder-b', b.supervisorGeneration + 1);
      await settle('seen', 1);
      const overlap: JournalEvent = { ev: 'overlap', t: 1, pid: 2, family: 'ch-a', scope: 'ok', sgen: gen1, claimed: 1, otherPid: 3 };
      const found = await checkInvariants(db, [overlap], true);
      const kinds = found.map((v) => `${v.invariant} ${v.key ?? ''}`).sort();
      assert.deepEqual(
        kinds,
        ['exactly-once ch-a/dup', 'lost ch-a/lost', 'single-flight ch-a/ok', 'stale-term ch-a/seen', 'stale-term ch-a/stale'],
        JSON.stringify(found),
      );
      const stale = found.find((v) => v.invariant === 'stale-term' && v.key === 'ch-a/stale')!;
      assert.ok((stale.rows![1] as { supervisor_generation: number }).supervisor_generation > gen1, 'the newer term of the history is shown');
    });
  });
}
