// The short chaos run of `npm test` (issue #10): one trial per backend, in parallel, of a few
// seconds of real candidates and durable tasks under random faults (task workers and runners
// included) and crash points, with a fresh seed every run
// (printed; replay with `npm run chaos -- --backend <b> --seed <seed>`). Fails on any safety
// violation (printed with its rows and the fault schedule) and on a drain that does not end.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { runTrial, type TrialResult } from '../../chaos/trial.ts';

test('short chaos run: no violation on either backend, every trial drains', { timeout: 300_000 }, async (t) => {
  const seed = process.env.APSUP_CHAOS_TEST_SEED ?? crypto.randomBytes(4).toString('hex');
  const results = await Promise.all(
    (['sqlite', 'mysql'] as const).map((backend) =>
      runTrial(
        {
          backend,
          seed,
          seconds: 5,
          drainSeconds: 45,
          drainMaxSeconds: 150,
          faults: true,
          crashPoints: true,
          misbehave: 0.3,
          scopes: 3,
          taskRate: 0.15,
        },
        (line) => t.diagnostic(line),
      ),
    ),
  );
  const describe = (r: TrialResult) =>
    `${r.options.backend} seed=${seed}: inputs=${r.driver.inputs} invocations=${r.invocations} tasks=${r.tasks.submitted} (${r.tasks.succeeded} succeeded, ${r.tasks.attempts} attempts) faults=${r.faults.map((f) => f.kind).join(',')} drained=${r.drained} (${r.drainMs} ms)`;
  for (const r of results) t.diagnostic(describe(r));
  for (const r of results) {
    assert.deepEqual(r.violations, [], `${describe(r)}\nschedule: ${JSON.stringify(r.faults)}`);
    assert.ok(r.drained, `drain timeout (liveness) ${describe(r)}; unsettled ${r.unsettled.join(', ')}; schedule: ${JSON.stringify(r.faults)}`);
    assert.ok(r.invocations > 0 && r.driver.inputs > 0, 'the trial did work');
    assert.ok(r.tasks.submitted > 0 && r.tasks.succeeded + r.tasks.failed === r.tasks.submitted, `every task submitted ended: ${describe(r)}`);
  }
});
