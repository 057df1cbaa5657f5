// ADR T5 (and RFC 6's rule applied to task handlers): a handler reaches the database only through
// its read handle (writes refused by the database) and its attempt-fenced commit. A real attempt
// child (test/fixtures/tasks/attacker.ts) tries every former write path while its attempt is live
// and again after its lease expired (a late owner); only the live fenced commit may write.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { BACKENDS, createBackend, type BackendFixture } from '../helpers/backends.ts';
import { createFixtureTables, isTerminal, makeRunner, tempDir, waitForTask } from './harness.ts';

type Attempt = { ok: boolean; name?: string; code?: string };
const READ_ONLY = { ok: false, name: 'ReadOnlyError', code: 'read_only' };

for (const backend of BACKENDS) {
  describe(`[${backend}] T5 a task handler has no write path around its attempt's fence`, () => {
    let fx: BackendFixture;
    const stops: Array<() => Promise<void>> = [];
    after(async () => {
      for (const stop of stops) await stop();
      await fx?.cleanup();
    });

    test('every former path is refused, live and as a late owner; only the live fenced commit writes', async () => {
      fx = await createBackend(backend);
      await createFixtureTables(fx);
      if (backend === 'mysql') {
        await fx.query(`CREATE FUNCTION fx_task_write(t BIGINT, e VARCHAR(64)) RETURNS INT MODIFIES SQL DATA
          BEGIN INSERT INTO fx_task_events (task_id, event, at_ms, pid, attempt) VALUES (t, e, 0, 0, 0); RETURN 1; END`);
      }
      const { runner, tasks } = await makeRunner(fx, { LEASE_SECONDS: '1', SWEEP_SECONDS: '3600' });
      stops.push(() => runner.stop());
      await runner.start();
      const reportFile = path.join(tempDir('apsup-task-attack'), 'report.json');
      const { taskId } = await tasks.submit({ taskType: 'fx-attack', handlerVersion: 1, payload: { reportFile, ms: 2500 }, timeoutMs: 600_000 });
      runner.notify();
      const done = await waitForTask(tasks, taskId, (t) => isTerminal(t) && fs.existsSync(reportFile), 60_000);
      const out = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as Record<string, Attempt>;

      for (const phase of ['live', 'late']) {
        assert.equal(out[`${phase}.store_reachable`].ok, false, `${phase}: ctx.store is not reachable`);
        for (const label of ['read_insert', 'read_database_refuses', 'read_task_write', 'read_complete', 'read_session_read_write']) {
          assert.deepEqual(out[`${phase}.${label}`], READ_ONLY, `${phase}.${label}`);
        }
      }
      assert.deepEqual(out['live.tx_task_write'], READ_ONLY);
      assert.deepEqual(out['live.tx_commit_then_write'], READ_ONLY);
      assert.deepEqual(out['live.fenced'], { ok: true });
      for (const label of ['tx_task_write', 'tx_commit_then_write', 'fenced']) {
        assert.deepEqual(out[`late.${label}`], { ok: false, name: 'AttemptLostError', code: 'attempt_lost' }, `late.${label}`);
      }
      assert.deepEqual(out['late.leaked_tx'], { ok: false, name: 'TransactionClosedError', code: 'transaction_closed' });
      assert.deepEqual(
        (await fx.query('SELECT event FROM fx_task_events WHERE task_id = ?', [taskId])).map((r) => r.event),
        ['live.fenced'],
      );
      assert.notEqual(done.state, 'succeeded', 'the late owner could not record a success');
    });
  });
}
