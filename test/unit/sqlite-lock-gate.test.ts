// The SQLite host's lock wait (lock-wait.ts): a lock found taken is probed again on the next turn
// of the event loop for its first millisecond (a worker's commit holds it for a fraction of one),
// then after timers that double up to 25 ms; the event loop never sleeps on the lock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUSY, LockGate, retryWhileBusy } from '../../src/store/sqlite/lock-wait.ts';

/** Whether the gate's next probe comes on the next turn of the event loop ('probe') or later ('later'). */
async function firstOf(gate: LockGate): Promise<'probe' | 'later'> {
  // Both are immediates, queued in this order: the gate's comes first when it probes on the next turn.
  const r = await Promise.race([gate.busy().then(() => 'probe' as const), new Promise<'later'>((resolve) => setImmediate(() => resolve('later')))]);
  await gate.busy(); // let the pending wait end before the next step
  return r;
}

test('a lock found taken is probed again on the next turn during its first millisecond, then by timers', async () => {
  let now = 0;
  const gate = new LockGate(() => now);
  assert.equal(await firstOf(gate), 'probe', 'the first probe comes on the next turn');
  now = 0.5;
  assert.equal(await firstOf(gate), 'probe', 'still within the first millisecond');
  now = 1.5;
  const t0 = performance.now();
  await gate.busy();
  assert.ok(performance.now() - t0 >= 0.9, 'after a millisecond the probes wait for a timer (1 ms at least)');
  gate.free();
  now = 100;
  assert.equal(await firstOf(gate), 'probe', 'a lock found free starts the next wait prompt again');
});

test('the bound still ends a wait for a lock that stays taken with DatabaseBusyError', async () => {
  const gate = new LockGate();
  let probes = 0;
  const started = performance.now();
  const error = await retryWhileBusy('op', { boundMs: 60, busyTimeoutMs: 0 }, gate, async () => {
    probes += 1;
    return BUSY;
  }).catch((e: Error) => e);
  assert.equal((error as Error).name, 'DatabaseBusyError');
  assert.ok(performance.now() - started >= 60);
  assert.ok(probes < 60, `${probes} probes in 60 ms: prompt probes for 1 ms only, then timers`);
});
