// Regression test of run 2's violation at seed fae82c0d-11 (MySQL, a drain that timed out): the
// checker read the cursors, then a processor committed (outputs, cursor, confirm-clean), then the
// checker read the outputs and the intent: "settled but consumed through 0" and "5 outputs but
// cursor at 0", a false 'lost' of the checker, not of the supervisor. Here that commit lands
// right after the checker's cursor read; every read must see one committed state (no violation).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { checkInvariants } from '../../chaos/checker.ts';
import { openTrialDb, type TrialDb } from '../../chaos/db.ts';
import { appendInputs } from '../../chaos/driver.ts';
import { bindingOf } from '../../chaos/families.ts';
import { nowExpr } from '../../chaos/schema.ts';
import { BACKENDS } from '../helpers/backends.ts';

for (const backend of BACKENDS) {
  describe(`chaos checker reads one snapshot (${backend})`, () => {
    let db: TrialDb;
    before(async () => {
      db = await openTrialDb(backend);
    });
    after(async () => {
      await db?.cleanup();
    });

    test("a commit between two of the checker's reads is not a violation", async () => {
      const term = await db.store.acquireTerm('global', 'holder-a', 60_000);
      await appendInputs(db, 'ch-a', 'race', 2, false);
      let committed = false;
      const found = await checkInvariants(db, [], false, undefined, async (sql) => {
        if (committed || !sql.includes('FROM ch_cursors')) return;
        committed = true;
        // The processor's commit, on another connection than the checker's reads.
        await db.store.transaction(async () => undefined);
        for (const seq of [1, 2]) {
          await db.exec(
            `INSERT INTO ch_outputs (family, scope_id, seq, supervisor_generation, seen_generation, holder_id, claimed_generation, worker_pid, written_at)
            VALUES ('ch-a', 'race', ?, ?, ?, 'holder-a', 1, 1, ${nowExpr(backend)})`,
            [seq, term.supervisorGeneration, term.supervisorGeneration],
          );
        }
        await db.exec('INSERT INTO ch_cursors (family, scope_id, through_seq) VALUES (?, ?, 2)', ['ch-a', 'race']);
        await db.exec(
          `UPDATE pc_artifact_processing_intents SET clean_generation = dirty_generation, handled_generation = requested_generation
          WHERE binding_name = ? AND scope_id = ?`,
          [bindingOf('ch-a'), 'race'],
        );
      });
      assert.ok(committed, 'the interleaved commit ran');
      assert.deepEqual(found, [], JSON.stringify(found));
      // After it, the committed state is checked as a whole: consistent too.
      assert.deepEqual(await checkInvariants(db, [], true), []);
    });
  });
}
